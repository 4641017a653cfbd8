// RFC 6749 6: Refreshing an Access Token, with the rotation and reuse detection of RFC 9700 4.14.2.
//
// A refresh token is single-use (docs/rules/specification.md#lifecycle): using it returns a new access token
// and a new refresh token, valid 30 days from its own issue. The use is one conditional write (claim first),
// so that of any number of concurrent uses exactly one succeeds. Any other use of a used token, including one
// that raced the winner, is invalid_grant and revokes every token of the grant; there is no grace period
// (docs/rules/tokens.md#refresh). `scope` may narrow the new access token; the new refresh token keeps the
// scopes of the one it replaces; what it issues stays within a registered client's scope
// (docs/rules/tokens.md#scopes-of-registered-clients). RFC 9449 5 (docs/rules/tokens.md#dpop): a refresh token bound to a DPoP key
// (a public client's) is used only with a proof of that key (else invalid_grant, and it is not consumed); the
// new access token is bound to the request's proof key, and the new refresh token keeps its predecessor's
// binding (a public client's unbound one becomes bound when it first refreshes with a proof).
// docs/rules/accounts.md#unconfirmed-accounts: the refresh token of an account whose address is not confirmed
// (a grant made before that rule) is invalid_grant, and is not consumed; the address's first confirmation
// revokes it anyway (src/accounts/lifecycle.ts).
import type { Client } from "@/generated/sqlite/client";
import { auditRow } from "@/audit/record-event";
import { now } from "@/clock";
import { digest } from "@/secrets";
import { OAuthError } from "@/oauth/errors";
import { requiredParam, stringParam } from "@/oauth/params";
import { assertWithinRegisteredScope, isSubset, parseScope, storedScopes } from "@/oauth/scope";
import { LostRotation, rotateAtOnce, rotateRefreshToken, type RefreshTokenRow, type RotationPlan } from "@/db/fast-sql";
import { accessExpiry, dpopBinding, mintTokens, newSecrets, refreshExpiry, revokeGrant, unconfirmedAccount, type TokenRecord } from "@/oauth/tokens";
import type { GrantContext } from "@/token-endpoint/grants/grant";
import { storedAudience } from "@/oauth/resource";

export const GRANT_TYPE = "refresh_token";

/** Client grants whose tokens come with refresh tokens (docs/rules/tokens.md#clients). */
const REFRESHABLE = new Set(["authorization_code", "password", "device_code"]);

/** A used refresh token was presented again: the grant is revoked once the rotation has rolled back. */
class Reused extends Error {
  constructor(readonly grantId: number) {
    super("refresh token reused");
  }
}

export async function refreshTokenGrant(client: Client, params: Record<string, unknown>, context: GrantContext): Promise<TokenRecord> {
  // Validate the request
  if (!REFRESHABLE.has(client.grantType)) throw new OAuthError("unauthorized_client");
  const presented = requiredParam(params, "refresh_token");
  const requested = parseScope(stringParam(params, "scope"));
  const binding = dpopBinding(client, context);

  // The common case where the database can do it in one statement (PostgreSQL): no narrowing asked for, so
  // the rules below are the token's own state, and the claim checks them itself. When it claims nothing,
  // the rotation below reads the token and says why.
  // A client registered with a scope takes the path that reads the token first, where the scope is checked.
  if (!requested && context.audience === null && client.scope === null) {
    const at = now();
    const secrets = newSecrets(true);
    const audit = auditRow({ type: "token.refreshed", clientId: client.clientId });
    const claimed = await rotateAtOnce({
      digest: digest(presented),
      clientId: client.id,
      at,
      accessDigest: digest(secrets.access),
      accessExpiresAt: accessExpiry(at),
      refreshDigest: digest(secrets.refresh!),
      refreshExpiresAt: refreshExpiry(at),
      jkt: binding.jkt,
      refreshJkt: binding.refreshJkt,
      audit: { type: audit.type, clientId: audit.clientId, ip: audit.ip },
    });
    if (claimed) {
      const granted = storedScopes(claimed.scopes);
      return mintTokens({ grantId: 0, clientId: client.id, userId: claimed.userId, scopes: granted, refreshScopes: granted, jkt: binding.jkt, audience: storedAudience(claimed.audience) }, at, secrets).record;
    }
  }

  // Validate the token and respond: one rotation (src/db/fast-sql.ts) reads the token, applies these
  // rules, then claims it and issues the new tokens together; a refusal writes nothing.
  let record: TokenRecord | null = null;
  const decide = (row: RefreshTokenRow | null): RotationPlan => {
    if (!row || row.clientId !== client.id) throw new OAuthError("invalid_grant", {}, "unknown refresh token");
    if (row.revokedAt) throw new OAuthError("invalid_grant", {}, "revoked refresh token");
    if (!row.userConfirmed) throw unconfirmedAccount(GRANT_TYPE);
    // Not a reuse: the presenter is not the key holder (RFC 9449 5), so nothing is consumed or revoked.
    if (row.jkt !== null && row.jkt !== binding.jkt) throw new OAuthError("invalid_grant", {}, "refresh token bound to another DPoP key");
    if (row.usedAt) throw new Reused(row.grantId);
    // RFC 8707 2.2: the new pair keeps the audience; a `resource` may name it again, never another one
    // (docs/rules/agents.md#audience): refused, and nothing is consumed.
    if (context.audience !== null && context.audience !== row.audience) throw new OAuthError("invalid_target", {}, "resource differs from the refresh token's");
    const at = now();
    if (row.expiresAt <= at) throw new OAuthError("invalid_grant", {}, "expired refresh token");
    const granted = storedScopes(row.scopes);
    if (requested && !isSubset(requested, granted)) throw new OAuthError("invalid_scope");
    // docs/rules/tokens.md#scopes-of-registered-clients: a grant made before the client narrowed its registered
    // scope (RFC 7592) refreshes only with a `scope` within it.
    assertWithinRegisteredScope(requested ?? granted, client.scope);
    const minted = mintTokens(
      { grantId: row.grantId, clientId: row.clientId, userId: row.userId, scopes: requested ?? granted, refreshScopes: granted, jkt: binding.jkt, refreshJkt: row.jkt ?? binding.refreshJkt, audience: storedAudience(row.audience) },
      at,
    );
    record = minted.record;
    return {
      at,
      access: minted.access,
      refresh: minted.refresh!,
      audit: auditRow({ type: "token.refreshed", userId: row.userId, clientId: client.clientId, detail: { scope: minted.record.scope } }),
    };
  };
  try {
    await rotateRefreshToken(digest(presented), decide);
  } catch (error) {
    // A used token, or a claim lost to another use racing this one: that is a reuse, and the whole grant goes.
    if (error instanceof Reused) {
      await revokeGrant(error.grantId, { type: "token.reuse_detected" });
      throw new OAuthError("invalid_grant", {}, "refresh token reused; grant revoked");
    }
    if (error instanceof LostRotation) {
      await revokeGrant(error.grantId, { type: "token.reuse_detected", detail: { concurrent: true } });
      throw new OAuthError("invalid_grant", {}, "refresh token reused concurrently; grant revoked");
    }
    throw error;
  }
  return record!;
}
