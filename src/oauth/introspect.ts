// RFC 7662 token introspection, POST /api/connect/oauth2/introspect/. Only confidential clients may ask
// (2.1: the endpoint must not become a token-scanning oracle), and a client sees only its own tokens as
// active. Anything else, unknown, expired, revoked or used, is {"active": false}. An access token's `aud` is
// the resource it was issued for, the API or the MCP server (RFC 8707, docs/rules/tokens.md#resource-indicators,
// docs/rules/agents.md#audience); a DPoP-bound token has
// token_type "DPoP" and its key's thumbprint as `cnf.jkt` (RFC 9449 6.2), a bound refresh token the `cnf` too.
import { now } from "@/clock";
import { readBody } from "@/http/body";
import { json, NO_STORE } from "@/http/respond";
import { authenticateClient, readCredentials } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";
import { requiredParam, stringParam } from "@/oauth/params";
import { findTokenByValue } from "@/oauth/tokens";
import { env } from "@/env";
import { resourceUri, storedAudience } from "@/oauth/resource";

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

export async function introspect(client: { id: number; clientId: string }, token: string, hint: string | undefined) {
  const row = await findTokenByValue(token, hint);
  if (!row || row.clientId !== client.id || row.revokedAt || row.usedAt || row.expiresAt <= now()) return { active: false };
  return {
    active: true,
    scope: row.scopes,
    client_id: client.clientId,
    username: row.user.email,
    token_type: row.kind === "refresh_token" ? "refresh_token" : row.jkt ? "DPoP" : "Bearer",
    exp: seconds(row.expiresAt),
    iat: seconds(row.createdAt),
    sub: String(row.user.id),
    iss: env().appUrl,
    ...(row.kind === "access_token" ? { aud: resourceUri(storedAudience(row.audience)) } : {}),
    ...(row.jkt ? { cnf: { jkt: row.jkt } } : {}),
  };
}

export async function handleIntrospectionRequest(request: Request): Promise<Response> {
  const params = await readBody(request, { form: true, invalidMessage: "invalid_request" });
  if (readCredentials(request, params).method === "none") throw new OAuthError("invalid_client", {}, "introspection needs client authentication");
  const client = await authenticateClient(request, params);
  const token = requiredParam(params, "token");
  return json(await introspect(client, token, stringParam(params, "token_type_hint")), 200, NO_STORE);
}
