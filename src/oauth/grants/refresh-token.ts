// RFC 6749 6: Refreshing an Access Token, with the rotation and reuse detection of RFC 9700 4.14.2.
//
// A refresh token is single-use (SPEC.md 3): using it returns a new access token and a new refresh token,
// valid 30 days from its own issue. The use is one conditional write (claim first), so that of any number
// of concurrent uses exactly one succeeds. Any other use of a used token, including one that raced the
// winner, is invalid_grant and revokes every token of the grant; there is no grace period (CONTRACT.md 4).
// `scope` may narrow the new access token; the new refresh token keeps the scopes of the one it replaces.
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { digest } from "@/server/crypto";
import { db, write } from "@/server/db";
import { OAuthError } from "@/oauth/errors";
import { requiredParam, stringParam } from "@/oauth/params";
import { isSubset, parseScope, storedScopes } from "@/oauth/scope";
import { issueTokens, revokeGrant, type TokenRecord } from "@/oauth/tokens";

export const GRANT_TYPE = "refresh_token";

/** Client grants whose tokens come with refresh tokens (CONTRACT.md 2). */
const REFRESHABLE = new Set(["authorization_code", "password", "device_code"]);

class LostClaim extends Error {}

export async function refreshTokenGrant(client: Client, params: Record<string, unknown>): Promise<TokenRecord> {
  // Validate
  if (!REFRESHABLE.has(client.grantType)) throw new OAuthError("unauthorized_client");
  const presented = requiredParam(params, "refresh_token");
  const requested = parseScope(stringParam(params, "scope"));

  const row = await (await db()).refreshToken.findUnique({ where: { digest: digest(presented) } });
  if (!row || row.clientId !== client.id) throw new OAuthError("invalid_grant", {}, "unknown refresh token");
  if (row.revokedAt) throw new OAuthError("invalid_grant", {}, "revoked refresh token");
  if (row.usedAt) {
    await revokeGrant(row.grantId);
    throw new OAuthError("invalid_grant", {}, "refresh token reused; grant revoked");
  }
  if (row.expiresAt <= now()) throw new OAuthError("invalid_grant", {}, "expired refresh token");
  const granted = storedScopes(row.scopes);
  if (requested && !isSubset(requested, granted)) throw new OAuthError("invalid_scope");

  // Respond: claim, then issue, in one transaction.
  try {
    return await write(async (tx) => {
      const at = now();
      const claimed = await tx.refreshToken.updateMany({
        where: { id: row.id, usedAt: null, revokedAt: null },
        data: { usedAt: at },
      });
      if (claimed.count !== 1) throw new LostClaim();
      // Locks the grant row against a concurrent revocation (see revokeGrantInTx).
      const live = await tx.grant.updateMany({ where: { id: row.grantId, revokedAt: null }, data: { lastUsedAt: at } });
      if (live.count !== 1) throw new LostClaim();
      return issueTokens(tx, {
        grantId: row.grantId,
        clientId: row.clientId,
        userId: row.userId,
        scopes: requested ?? granted,
        refreshScopes: granted,
      });
    });
  } catch (error) {
    if (!(error instanceof LostClaim)) throw error;
    // Another request used this token first: that is a reuse, and the whole grant goes.
    await revokeGrant(row.grantId);
    throw new OAuthError("invalid_grant", {}, "refresh token reused concurrently; grant revoked");
  }
}
