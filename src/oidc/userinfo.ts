// The UserInfo endpoint, GET or POST /api/connect/oauth2/userinfo/ (OpenID Connect Core 5.3, CONTRACT.md 9):
// with a bearer access token that holds `openid`, the claims of the token's scopes as JSON. The token is
// read from the Authorization header only (CONTRACT.md 1: a token in the body or query never authenticates).
// No token: 401 with a Bearer challenge; an unknown, expired or revoked one: 401 invalid_token; a token
// without `openid`: 403 insufficient_scope (RFC 6750 3.1).
import { ApiError } from "@/http/errors";
import { bearerToken, unauthorized } from "@/http/auth";
import { json, NO_STORE } from "@/http/respond";
import { db } from "@/server/db";
import { storedScopes } from "@/oauth/scope";
import { now } from "@/clock";
import { digest } from "@/server/crypto";
import { bearerToken as liveAccessToken } from "@/server/fast-sql";
import { userClaims } from "@/oidc/claims";

const CHALLENGE = 'Bearer realm="api"';
const invalidToken = () => new ApiError(401, "invalid_token", { "WWW-Authenticate": `${CHALLENGE}, error="invalid_token"` });

export async function handleUserInfoRequest(request: Request): Promise<Response> {
  let token: string | null;
  try {
    token = bearerToken(request);
  } catch {
    throw invalidToken();
  }
  if (token === null) throw unauthorized(false);
  // The same one-statement lookup as every /api resource (src/server/fast-sql.ts).
  const row = await liveAccessToken(digest(token), now());
  if (!row) throw invalidToken();
  const scopes = storedScopes(row.scopes);
  if (!scopes.includes("openid")) {
    throw new ApiError(403, "insufficient_scope", { "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="openid"` });
  }
  const user = await (await db()).user.findUnique({ where: { id: row.userId } });
  if (!user) throw invalidToken();
  return json(userClaims(user, scopes), 200, NO_STORE);
}
