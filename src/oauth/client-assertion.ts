// Client authentication with a signed JWT (RFC 7523 2.2 and 3, RFC 7521 4.2, OpenID Connect Core 9
// private_key_jwt; docs/rules/tokens.md#client-assertions). The checks of a `client_assertion`:
// - one compact JWS signed RS256 or ES256 (jose) with one of the client's registered public keys
//   (src/clients/client-keys.ts); no key is ever fetched from a URL;
// - `iss` and `sub` both the client_id;
// - `aud` the issuer or the URL of the endpoint receiving it (a list holding one of them is accepted);
// - `exp` in the future and at most MAX_ASSERTION_LIFETIME_SECONDS ahead; `nbf`, if present, passed; `iat`,
//   if present, no more than CLOCK_SKEW_SECONDS ahead of our clock and not after `exp`;
// - `jti` (1-256 characters) never used before by this client on any instance: a row keyed by the digest of
//   client_id and jti, kept until `exp` (pruned by tokens:prune), written last so that an assertion failing any
//   other check uses up nothing; the insert is the check, so of two at once exactly one passes.
// Every failure is the caller's 401 invalid_client; the reason goes to the log only.
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import type { Client } from "@/generated/sqlite/client";
import { now, nowMs } from "@/clock";
import { env } from "@/env";
import { digest } from "@/secrets";
import { CLIENT_ASSERTION_ALGS, clientKeysOf } from "@/clients/client-keys";
import { rememberClientAssertion } from "@/db/fast-sql";

export const CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** How far ahead of our clock `exp` may be (seconds). */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;
/** How far ahead of our clock `iat` may be (seconds). */
export const CLOCK_SKEW_SECONDS = 60;

export class ClientAssertionError extends Error {
  override name = "ClientAssertionError";
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The client_id an assertion names (its `sub`, which must equal its `iss`), read before any signature is
 * checked: only to find the client whose keys verify it. Throws ClientAssertionError.
 */
export function assertionClientId(assertion: string): string {
  if (assertion.length > 8000 || !COMPACT_JWS.test(assertion)) throw new ClientAssertionError("not one compact JWS");
  let claims: ReturnType<typeof decodeJwt>;
  try {
    claims = decodeJwt(assertion);
  } catch {
    throw new ClientAssertionError("unreadable claims");
  }
  if (typeof claims.sub !== "string" || claims.sub === "" || claims.iss !== claims.sub) throw new ClientAssertionError("iss and sub are not one client_id");
  return claims.sub;
}

/** The audiences an assertion sent to this request may name: the issuer, and this endpoint's URL. */
export function acceptedAudiences(request: Request): string[] {
  const issuer = env().appUrl;
  const endpoint = `${issuer}${new URL(request.url).pathname}`;
  return [issuer, endpoint, endpoint.endsWith("/") ? endpoint.slice(0, -1) : `${endpoint}/`];
}

/** Verifies `assertion` as `client`'s authentication of `request`, and uses up its jti. Throws ClientAssertionError. */
export async function verifyClientAssertion(request: Request, client: Client, assertion: string): Promise<void> {
  const keys = clientKeysOf(client);
  if (!keys) throw new ClientAssertionError("the client has no keys");
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(assertion, createLocalJWKSet(keys), {
      algorithms: [...CLIENT_ASSERTION_ALGS],
      issuer: client.clientId,
      subject: client.clientId,
      audience: acceptedAudiences(request),
      requiredClaims: ["exp", "jti"],
      currentDate: now(),
      clockTolerance: 0,
    }));
  } catch (error) {
    throw new ClientAssertionError(`signature or claims do not verify (${(error as { code?: string }).code ?? "error"})`);
  }
  const seconds = nowMs() / 1000;
  const { exp, iat, jti } = payload;
  if (typeof exp !== "number" || exp > seconds + MAX_ASSERTION_LIFETIME_SECONDS) throw new ClientAssertionError("exp too far ahead");
  if (iat !== undefined && (typeof iat !== "number" || iat > seconds + CLOCK_SKEW_SECONDS || iat > exp)) throw new ClientAssertionError("iat not sane");
  if (typeof jti !== "string" || jti.length === 0 || jti.length > 256) throw new ClientAssertionError("bad jti");
  if (!(await rememberClientAssertion(digest(`${client.clientId}:${jti}`), new Date(exp * 1000)))) throw new ClientAssertionError("jti replayed");
}
