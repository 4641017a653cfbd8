// The token endpoint, POST /api/connect/oauth2/token/ (docs/rules/tokens.md#token-endpoint), as a list of
// small steps: read the body (JSON, text/plain JSON or form), authenticate the client, pick the grant handler
// by grant_type, add the OpenID Connect id_token where the grant has one
// (docs/rules/openid-connect.md#id-tokens), answer the token record with no-store headers. `resource` must be
// one of this service's resources, and the tokens are for it (RFC 8707, docs/rules/tokens.md#resource-indicators,
// docs/rules/agents.md#audience); `scope` stays within a registered client's scope
// (docs/rules/tokens.md#scopes-of-registered-clients); a DPoP proof (RFC 9449 5), when the
// request has one, is checked before the grant runs (a bad or replayed one is 400 invalid_dpop_proof and
// consumes nothing) and the grant binds its tokens to the proof's key.
import { readBody } from "@/http/body";
import { json, NO_STORE } from "@/http/respond";
import { authenticateClient } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";
import { countTokenIssued } from "@/observability/metrics";
import { authorizationCodeGrant } from "@/token-endpoint/grants/authorization-code";
import { clientCredentialsGrant } from "@/token-endpoint/grants/client-credentials";
import { deviceCodeGrant, GRANT_TYPE as DEVICE_CODE } from "@/token-endpoint/grants/device-code";
import { passwordGrant } from "@/token-endpoint/grants/password";
import { refreshTokenGrant } from "@/token-endpoint/grants/refresh-token";
import { requiredParam, stringParam } from "@/oauth/params";
import { assertWithinRegisteredScope, parseScope } from "@/oauth/scope";
import { dpopHeader, DpopProofError, verifyDpopProof } from "@/dpop/proof";
import { requestedAudience } from "@/oauth/resource";
import { idTokenForAccessToken } from "@/oidc/id-token";
import { currentSigningKey } from "@/oidc/keys";
import type { GrantContext, GrantHandler } from "@/token-endpoint/grants/grant";


const grantHandlers = new Map<string, GrantHandler>([
  ["authorization_code", authorizationCodeGrant],
  ["password", passwordGrant],
  ["refresh_token", refreshTokenGrant],
  ["client_credentials", clientCredentialsGrant],
  [DEVICE_CODE, deviceCodeGrant],
]);

/** Grant types whose answer may carry an id_token: when the token holds openid and its grant began with a
 * person signing in through the code or device flow (src/oidc/id-token.ts decides). */
const MAY_CARRY_ID_TOKEN = new Set(["authorization_code", "refresh_token", DEVICE_CODE]);

export async function handleTokenRequest(request: Request): Promise<Response> {
  const params = await readBody(request, { form: true, invalidMessage: "invalid_request" });
  const grantType = requiredParam(params, "grant_type");
  const client = await authenticateClient(request, params);
  const handler = grantHandlers.get(grantType);
  if (!handler) throw new OAuthError("unsupported_grant_type");
  const audience = requestedAudience([params.resource]);
  // docs/rules/tokens.md#scopes-of-registered-clients: whatever the grant, a `scope` asked for here stays
  // within the client's registered scope (a refresh without one is checked by its grant).
  assertWithinRegisteredScope(parseScope(stringParam(params, "scope")) ?? [], client.scope);
  const context: GrantContext = { jkt: dpopHeader(request) === null ? null : await proofKey(request), audience };
  const mayCarryIdToken = MAY_CARRY_ID_TOKEN.has(grantType);
  // Load the signing key before a code or refresh token is spent, so that a key that cannot be used fails
  // the request before anything is consumed (one indexed read; the key itself is decrypted once per process).
  if (mayCarryIdToken) await currentSigningKey();
  const record = await handler(client, params, context);
  const idToken = mayCarryIdToken && record.scopes.includes("openid") ? await idTokenForAccessToken(record.access_token) : null;
  countTokenIssued(grantType);
  return json(idToken ? { ...record, id_token: idToken } : record, 200, NO_STORE);
}

async function proofKey(request: Request): Promise<string> {
  try {
    return (await verifyDpopProof(request)).jkt;
  } catch (error) {
    if (error instanceof DpopProofError) throw new OAuthError("invalid_dpop_proof", {}, error.message);
    throw error;
  }
}
