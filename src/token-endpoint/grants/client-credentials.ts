// RFC 6749 4.4: Client Credentials Grant (docs/rules/tokens.md#client-credentials).
//
// A confidential client of the `client_credentials` grant type acts for its owner, like a password client
// (docs/rules/specification.md#authentication) but without the owner's password: the token's `user` is the
// owner. Scopes are the API's own (`readonly`, `readwrite`; without `scope`, `readonly`); OpenID Connect's
// scopes describe a person signing in, which this grant has none of, and are invalid_scope. No refresh token
// (RFC 6749 4.4.3).
import type { Client } from "@/generated/sqlite/client";
import { isPublicClient } from "@/clients/represent";
import { OAuthError } from "@/oauth/errors";
import { stringParam } from "@/oauth/params";
import { API_SCOPES, parseScope, type Scope } from "@/oauth/scope";
import { startGrant, type TokenRecord } from "@/oauth/tokens";
import type { GrantContext } from "@/token-endpoint/grants/grant";

export const GRANT_TYPE = "client_credentials";

const DEFAULT_SCOPES: Scope[] = ["readonly"];

export async function clientCredentialsGrant(client: Client, params: Record<string, unknown>, context: GrantContext): Promise<TokenRecord> {
  // Validate
  // A client that registered itself has no owner to act for (docs/rules/tokens.md#dynamic-registration).
  const ownerId = client.ownerId;
  if (client.grantType !== GRANT_TYPE || isPublicClient(client) || ownerId === null) throw new OAuthError("unauthorized_client");
  const scopes = parseScope(stringParam(params, "scope")) ?? DEFAULT_SCOPES;
  if (scopes.some((scope) => !(API_SCOPES as readonly string[]).includes(scope))) {
    throw new OAuthError("invalid_scope", {}, "client_credentials takes readonly and readwrite only");
  }

  // Respond: a grant of its own for each token, so that deleting the token ends only that one; the grant, the
  // token and the token.issued event in one commit (src/db/fast-sql.ts startGrant).
  return startGrant({ clientId: client.id, publicClientId: client.clientId, userId: ownerId, grantType: GRANT_TYPE, scopes, withRefreshToken: false, jkt: context.jkt, refreshJkt: null, audience: context.audience });
}
