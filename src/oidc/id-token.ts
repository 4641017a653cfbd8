// The id_token (OpenID Connect Core 2, 3.1.3.6 and 12.2; docs/rules/openid-connect.md#id-tokens): a JWS signed
// RS256 with the current signing key, whose kid the JWKS publishes. Claims: iss (exactly the discovery
// issuer), sub, aud (the client_id), iat, exp (an hour), auth_time (when the user last typed their password
// before authorizing), amr (["pwd"] with auth_time: the password sign-in; no acr, which is left out),
// nonce (when the authorization request had one; refreshes repeat it, 12.2), at_hash
// (3.1.3.6: the left half of the access token's SHA-256, base64url), and the claims of the profile and email
// scopes; sid, the browser session in which the grant was authorized (OpenID Connect Back-Channel Logout 1.0
// 2.1; docs/rules/openid-connect.md#back-channel-logout), whose end then sends this client a logout token.
//
// Issued by the token endpoint for grants started by the authorization code flow or the device flow when the
// token holds `openid`, on the first exchange and on every refresh. Implicit, password and client
// credentials grants never get one.
import { createHash } from "node:crypto";
import { SignJWT } from "jose";
import { nowMs } from "@/clock";
import { env } from "@/env";
import { digest } from "@/secrets";
import { db } from "@/db/client";
import { storedScopes } from "@/oauth/scope";
import { userClaims } from "@/oidc/claims";
import { currentSigningKey, SIGNING_ALG } from "@/oidc/keys";
import { recordSessionClient } from "@/browser-sessions/session-clients";

export const ID_TOKEN_TTL_SECONDS = 3600;
/** The grants whose tokens come with an id_token when they hold `openid`. */
export const ID_TOKEN_GRANTS = new Set(["authorization_code", "device_code"]);

/** OpenID Connect Core 3.1.3.6: base64url of the left-most half of the SHA-256 of the access token's ASCII. */
export function accessTokenHash(accessToken: string): string {
  const hash = createHash("sha256");
  // Stryker disable next-line StringLiteral: access tokens are base64url, the same bytes in ASCII and in UTF-8
  hash.update(accessToken, "ascii");
  return hash.digest().subarray(0, 16).toString("base64url");
}

/**
 * The id_token to go with a freshly issued access token, or null when the token's grant is not one that
 * issues id_tokens or the token does not hold `openid`.
 */
export async function idTokenForAccessToken(accessToken: string): Promise<string | null> {
  const row = await (await db()).accessToken.findUnique({
    where: { digest: digest(accessToken) },
    include: {
      grant: true,
      user: true,
      // Stryker disable next-line ObjectLiteral: the whole client row holds the same clientId, the only field read
      client: {
        select: { clientId: true },
      },
    },
  });
  if (!row || !ID_TOKEN_GRANTS.has(row.grant.grantType)) return null;
  const scopes = storedScopes(row.scopes);
  if (!scopes.includes("openid")) return null;

  const { kid, key } = await currentSigningKey();
  const issuedAt = Math.floor(nowMs() / 1000);
  const payload = {
    ...userClaims(row.user, scopes),
    ...(row.grant.authTime ? { auth_time: Math.floor(row.grant.authTime.getTime() / 1000) } : {}),
    // The one way anyone signs in here is their password (RFC 8176 2: "pwd"); a grant without a sign-in time
    // records no method. No acr: this service has no levels of assurance, and none can be asked for.
    ...(row.grant.authTime ? { amr: ["pwd"] } : {}),
    ...(row.grant.nonce ? { nonce: row.grant.nonce } : {}),
    at_hash: accessTokenHash(accessToken),
    ...(row.grant.sid ? { sid: row.grant.sid } : {}),
  };
  if (row.grant.sid) await recordSessionClient(row.grant.sid, row.userId, row.clientId);
  return new SignJWT(payload)
    .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: "JWT" })
    .setIssuer(env().appUrl)
    .setSubject(String(row.userId))
    .setAudience(row.client.clientId)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ID_TOKEN_TTL_SECONDS)
    .sign(key);
}
