// DPoP proofs (RFC 9449 4.3, docs/rules/tokens.md#dpop): the checks a server makes of the `DPoP` header, with
// jose for the JWS and the JWK thumbprint (RFC 7638).
// - one header holding one compact JWS whose `typ` is `dpop+jwt` and whose `alg` is ES256 or RS256 (4.2);
// - `jwk` a public key (no private members: 4.3 step 7), and the signature verifies with it;
// - `htm` the request's method; `htu` the request's URL as the client sees it (APP_URL and the path), query
//   and fragment left out on both sides (4.3 steps 9-10);
// - `iat` within 60 seconds of our clock either way (11.1); `ath` the SHA-256 of the access token when one
//   is presented with the proof (4.3 step 12, 7.1);
// - `jti` never seen before for this key by any instance (11.1): a row with a unique key in the database,
//   written last, so that a proof failing any other check uses up nothing.
// A request without a DPoP header pays for none of this: callers look for the header first.
import { createHash } from "node:crypto";
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify, type JWK } from "jose";
import { now, nowMs } from "@/clock";
import { env } from "@/env";
import { digest } from "@/secrets";
import { rememberDpopProof } from "@/db/fast-sql";

export const DPOP_ALGS = ["ES256", "RS256"] as const;
/** How far `iat` may be from our clock, either way (seconds). */
export const IAT_WINDOW_SECONDS = 60;
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/** A proof that fails a check; callers answer invalid_dpop_proof (400 at the token endpoint, 401 on /api). */
export class DpopProofError extends Error {
  override name = "DpopProofError";
}

export type VerifiedProof = { jkt: string; jti: string };

/** The request's `DPoP` header, or null when there is none. */
export function dpopHeader(request: Request): string | null {
  return request.headers.get("dpop");
}

/** The URL a client signs in `htu` for this request: our public origin and the path, no query or fragment. */
export function expectedHtu(request: Request): string {
  return `${env().appUrl}${new URL(request.url).pathname}`;
}

function normalisedHtu(value: unknown): string | null {
  if (typeof value !== "string" || !URL.canParse(value)) return null;
  const url = new URL(value); // lower-cases scheme and host, drops a default port (RFC 3986 6.2.2-6.2.3)
  return `${url.origin}${url.pathname}`;
}

/** base64url(SHA-256(access token)): the `ath` claim (RFC 9449 4.2). */
export function accessTokenHash(accessToken: string): string {
  return createHash("sha256").update(accessToken, "ascii").digest("base64url");
}

/**
 * Verifies the request's DPoP proof and records its jti. `accessToken`: the token presented with it (then
 * `ath` must match). Throws DpopProofError; resolves with the key's thumbprint.
 */
export async function verifyDpopProof(request: Request, options: { accessToken?: string } = {}): Promise<VerifiedProof> {
  const proof = dpopHeader(request);
  // Several DPoP headers arrive joined by commas, which a compact JWS never holds (4.3 step 1).
  if (!proof || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) throw new DpopProofError("not one compact JWS");
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw new DpopProofError("unreadable header");
  }
  if (header.typ !== "dpop+jwt") throw new DpopProofError("typ is not dpop+jwt");
  if (!DPOP_ALGS.includes(header.alg as (typeof DPOP_ALGS)[number])) throw new DpopProofError("alg not allowed");
  const jwk = header.jwk as JWK | undefined;
  if (!jwk || typeof jwk !== "object" || Array.isArray(jwk)) throw new DpopProofError("no jwk");
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) throw new DpopProofError("jwk holds a private key");

  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: "dpop+jwt", algorithms: [...DPOP_ALGS], currentDate: now() }));
  } catch {
    throw new DpopProofError("signature or claims do not verify");
  }

  const { jti, htm, htu, iat, ath } = payload;
  if (typeof jti !== "string" || jti.length === 0 || jti.length > 256) throw new DpopProofError("bad jti");
  if (htm !== request.method) throw new DpopProofError("htm is not the request's method");
  if (normalisedHtu(htu) !== normalisedHtu(expectedHtu(request))) throw new DpopProofError("htu is not the request's URL");
  if (typeof iat !== "number" || Math.abs(nowMs() / 1000 - iat) > IAT_WINDOW_SECONDS) throw new DpopProofError("iat too far from now");
  if (options.accessToken !== undefined && ath !== accessTokenHash(options.accessToken)) throw new DpopProofError("ath does not match the token");

  const jkt = await calculateJwkThumbprint(jwk, "sha256");
  // Kept until a proof with this iat could no longer pass the check above.
  const keepUntil = new Date(Math.max(iat * 1000, nowMs()) + IAT_WINDOW_SECONDS * 1000);
  if (!(await rememberDpopProof(digest(`${jkt}:${jti}`), keepUntil))) throw new DpopProofError("jti replayed");
  return { jkt, jti };
}
