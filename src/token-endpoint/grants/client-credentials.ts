// RFC 6749 4.4: Client Credentials Grant (docs/rules/tokens.md#client-credentials).
//
// A confidential client of the `client_credentials` grant type acts for its owner, like a password client
// (docs/rules/specification.md#authentication) but without the owner's password: the token's `user` is the
// owner. Scopes are the API's own (`readonly`, `readwrite`; without `scope`, `readonly`); OpenID Connect's
// scopes describe a person signing in, which this grant has none of, and are invalid_scope. No refresh token
// (RFC 6749 4.4.3).
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { recordEventInTx } from "@/audit/record-event";
import { isPublicClient } from "@/clients/represent";
import { write } from "@/db/client";
import { OAuthError } from "@/oauth/errors";
import { stringParam } from "@/oauth/params";
import { API_SCOPES, formatScope, parseScope, type Scope } from "@/oauth/scope";
import { issueTokens, type TokenRecord } from "@/oauth/tokens";
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

  // Respond: a grant of its own for each token, so that deleting the token ends only that one.
  return write(async (tx) => {
    const at = now();
    const grant = await tx.grant.create({
      data: { clientId: client.id, userId: ownerId, grantType: GRANT_TYPE, scopes: formatScope(scopes), createdAt: at, lastUsedAt: at },
    });
    const record = await issueTokens(tx, { grantId: grant.id, clientId: client.id, userId: ownerId, scopes, refreshScopes: null, jkt: context.jkt, audience: context.audience }, GRANT_TYPE);
    await recordEventInTx(tx, { type: "token.issued", userId: ownerId, clientId: client.clientId, detail: { grant_type: GRANT_TYPE, scope: record.scope } });
    return record;
  });
}
