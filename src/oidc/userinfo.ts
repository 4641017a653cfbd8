// The UserInfo endpoint, GET or POST /api/connect/oauth2/userinfo/ (OpenID Connect Core 5.3,
// docs/rules/openid-connect.md#userinfo): with a bearer access token that holds `openid`, the claims of the
// token's scopes as JSON. The token is read from the Authorization header only (a token in the body or query
// never authenticates: docs/rules/endpoints.md#api-authentication). No token: 401 with the Bearer and DPoP
// challenges; an unknown, expired or revoked one: 401 invalid_token; a token without `openid`: 403
// insufficient_scope (RFC 6750 3.1). DPoP-bound tokens as on every /api resource (src/resource/authenticate.ts); every
// access token's audience is the API (RFC 8707, docs/rules/tokens.md#resource-indicators), accepted here.
import { ApiError } from "@/http/errors";
import { accessCredentials, presentedAccessToken, unauthorized, type AccessCredentials } from "@/resource/authenticate";
import { json, NO_STORE } from "@/http/respond";
import { db } from "@/db/client";
import { storedScopes } from "@/oauth/scope";
import { userClaims } from "@/oidc/claims";

const CHALLENGE = 'Bearer realm="api"';
/** The 401s of src/resource/authenticate.ts, with the RFC 6750 code as the body (OpenID Connect Core 5.3.3). */
const asInvalidToken = (error: unknown) =>
  error instanceof ApiError && error.status === 401 ? new ApiError(401, /error="invalid_dpop_proof"/.test(error.headers["WWW-Authenticate"] ?? "") ? "invalid_dpop_proof" : "invalid_token", error.headers) : error;

export async function handleUserInfoRequest(request: Request): Promise<Response> {
  let credentials: AccessCredentials | null;
  let row: Awaited<ReturnType<typeof presentedAccessToken>>;
  try {
    credentials = accessCredentials(request);
    if (credentials === null) throw unauthorized(null);
    // The same one-statement lookup and DPoP rules as every /api resource.
    row = await presentedAccessToken(request, credentials);
  } catch (error) {
    if (error instanceof ApiError && error.error === "authentication required") throw error;
    throw asInvalidToken(error);
  }
  const scopes = storedScopes(row.scopes);
  if (!scopes.includes("openid")) {
    throw new ApiError(403, "insufficient_scope", { "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="openid"` });
  }
  const user = await (await db()).user.findUnique({ where: { id: row.userId } });
  if (!user) throw unauthorized({ scheme: credentials.scheme, error: "invalid_token" }, "invalid_token");
  return json(userClaims(user, scopes), 200, NO_STORE);
}
