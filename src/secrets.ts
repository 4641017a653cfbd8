// Opaque secrets (tokens, codes, client secrets) and their digests. Only digests are stored; lookups are by
// digest (an index, no comparison of the secret itself) and direct comparisons use timingSafeEqual.
import { hash, randomBytes, timingSafeEqual } from "node:crypto";

/** 256 bits of randomness, base64url: 43 characters. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** SHA-256, hex (crypto.hash: the one-shot form, a third of createHash's cost on every bearer request). */
export function digest(secret: string): string {
  return hash("sha256", secret, "hex");
}

/** Constant-time check of a presented secret against a stored digest. */
export function secretMatchesDigest(secret: string, storedDigest: string): boolean {
  const presented = Buffer.from(digest(secret), "hex");
  const stored = Buffer.from(storedDigest, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
