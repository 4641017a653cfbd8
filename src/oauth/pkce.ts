// PKCE (RFC 7636), S256 only: `plain` is refused (RFC 9700 2.1.1), and so is a code_verifier sent for a code
// issued without a challenge (a downgrade).
import { createHash, timingSafeEqual } from "node:crypto";

const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/; // base64url(SHA-256) without padding
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Why a challenge cannot be accepted, or null. */
export function challengeProblem(challenge: string | undefined, method: string | undefined): string | null {
  if (challenge === undefined) return method === undefined ? null : "code_challenge_method without code_challenge";
  if (method !== "S256") return "code_challenge_method must be S256";
  if (!CHALLENGE.test(challenge)) return "code_challenge must be a base64url SHA-256 digest";
  return null;
}

export function s256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/** Whether the verifier answers the challenge; false for a malformed verifier. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  const a = Buffer.from(s256(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}
