// The token endpoint, POST /api/connect/oauth2/token/ (SPEC.md 4.2, CONTRACT.md 4), as a list of small
// steps: read the body (JSON, text/plain JSON or form), authenticate the client, pick the grant handler by
// grant_type, answer the token record with no-store headers.
import { readBody } from "@/http/body";
import { json, NO_STORE } from "@/http/respond";
import { authenticateClient } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";
import { authorizationCodeGrant } from "@/oauth/grants/authorization-code";
import { passwordGrant } from "@/oauth/grants/password";
import { refreshTokenGrant } from "@/oauth/grants/refresh-token";
import { requiredParam } from "@/oauth/params";
import type { Client } from "@/generated/sqlite/client";
import type { TokenRecord } from "@/oauth/tokens";

type GrantHandler = (client: Client, params: Record<string, unknown>) => Promise<TokenRecord>;

const grantHandlers = new Map<string, GrantHandler>([
  ["authorization_code", authorizationCodeGrant],
  ["password", passwordGrant],
  ["refresh_token", refreshTokenGrant],
]);

export async function handleTokenRequest(request: Request): Promise<Response> {
  const params = await readBody(request, { form: true, invalidMessage: "invalid_request" });
  const grantType = requiredParam(params, "grant_type");
  const client = await authenticateClient(request, params);
  const handler = grantHandlers.get(grantType);
  if (!handler) throw new OAuthError("unsupported_grant_type");
  const record = await handler(client, params);
  return json(record, 200, NO_STORE);
}
