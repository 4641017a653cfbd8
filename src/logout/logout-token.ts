// The logout token (OpenID Connect Back-Channel Logout 1.0 section 2.4; docs/rules/openid-connect.md#back-channel-logout):
// a JWT signed as id_tokens are (src/oidc/keys.ts, RS256, the current key's kid), with `typ` logout+jwt
// (section 2.4 recommends explicit typing so that it is never taken for an id_token), iss, aud (the client_id),
// iat, exp (two minutes), jti (stable across retries of one delivery), sub, sid and the back-channel logout
// event. Never a nonce (2.4: it is forbidden there).
import { SignJWT } from "jose";
import { nowMs } from "@/clock";
import { env } from "@/env";
import { currentSigningKey, SIGNING_ALG } from "@/oidc/keys";

export const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

export async function signLogoutToken(claims: { clientId: string; sub: string; sid: string; jti: string }): Promise<string> {
  const { kid, key } = await currentSigningKey();
  const issuedAt = Math.floor(nowMs() / 1000);
  return new SignJWT({ sid: claims.sid, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } })
    .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: "logout+jwt" })
    .setIssuer(env().appUrl)
    .setSubject(claims.sub)
    .setAudience(claims.clientId)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + LOGOUT_TOKEN_TTL_SECONDS)
    .setJti(claims.jti)
    .sign(key);
}
