// RFC 8628 3.4 and 3.5: Device Access Token Request and Response (docs/rules/tokens.md#device-flow).
//
// The device polls with grant_type urn:ietf:params:oauth:grant-type:device_code and its device_code:
// - a device code that is unknown or another client's, or that already gave its tokens: invalid_grant;
// - past expires_in: expired_token; after Deny: access_denied;
// - still pending: authorization_pending, or slow_down when polled sooner than `interval` after the last
//   poll, which then grows by 5 seconds for every later poll (3.5). The last poll time is compared and set
//   in one conditional write, so of two polls at once one is "too soon";
// - approved: the token record of docs/rules/tokens.md#token-response with a refresh token, exactly once: the
//   first poll claims the device code with one conditional write as the first statement of the transaction
//   that issues. A later poll is invalid_grant and revokes nothing: a device that retried a lost answer is no
//   attacker.
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { recordEventInTx } from "@/audit/record-event";
import { ApiError } from "@/http/errors";
import { digest } from "@/secrets";
import { db, write } from "@/db/client";
import { OAuthError } from "@/oauth/errors";
import { requiredParam } from "@/oauth/params";
import { storedScopes } from "@/oauth/scope";
import { dpopBinding, issueTokens, type TokenRecord } from "@/oauth/tokens";
import type { GrantContext } from "@/token-endpoint/grants/grant";

export const GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";
/** The client grant type (docs/rules/tokens.md#device-flow) whose clients may use this grant. */
export const CLIENT_GRANT_TYPE = "device_code";
export const SLOW_DOWN_STEP_SECONDS = 5;

class LostClaim extends Error {}

export async function deviceCodeGrant(client: Client, params: Record<string, unknown>, context: GrantContext): Promise<TokenRecord> {
  // Validate
  if (client.grantType !== CLIENT_GRANT_TYPE) throw new OAuthError("unauthorized_client");
  const deviceCode = requiredParam(params, "device_code");
  const row = await (await db()).deviceAuthorization.findUnique({ where: { deviceCodeDigest: digest(deviceCode) } });
  if (!row || row.clientId !== client.id) throw new OAuthError("invalid_grant", {}, "unknown device code");
  if (row.usedAt) throw new OAuthError("invalid_grant", {}, "device code already used");
  const at = now();
  if (row.expiresAt <= at) throw new OAuthError("expired_token");
  // RFC 8628 3.5 names access_denied for the token endpoint, where errors are 400 (RFC 6749 5.2).
  if (row.status === "denied") throw new ApiError(400, "access_denied");

  if (row.status === "pending") {
    const tooSoon = row.lastPolledAt !== null && at.getTime() - row.lastPolledAt.getTime() < row.interval * 1000;
    const polled = await write((tx) =>
      tx.deviceAuthorization.updateMany({
        where: { id: row.id, lastPolledAt: row.lastPolledAt, interval: row.interval },
        data: { lastPolledAt: at, ...(tooSoon ? { interval: { increment: SLOW_DOWN_STEP_SECONDS } } : {}) },
      }),
    );
    if (polled.count === 1 && !tooSoon) throw new OAuthError("authorization_pending");
    if (polled.count === 0) {
      // Another poll of this code got in between: this one came too soon after it.
      await write((tx) => tx.deviceAuthorization.update({ where: { id: row.id }, data: { interval: { increment: SLOW_DOWN_STEP_SECONDS } } }));
    }
    throw new OAuthError("slow_down");
  }

  // Respond: approved. Claim, then issue, in one transaction.
  try {
    return await write(async (tx) => {
      const issuedAt = now();
      const claimed = await tx.deviceAuthorization.updateMany({ where: { id: row.id, status: "approved", usedAt: null }, data: { usedAt: issuedAt } });
      if (claimed.count !== 1 || row.userId === null) throw new LostClaim();
      const scopes = storedScopes(row.scopes);
      const grant = await tx.grant.create({
        data: { clientId: client.id, userId: row.userId, grantType: CLIENT_GRANT_TYPE, scopes: row.scopes, createdAt: issuedAt, lastUsedAt: issuedAt, authTime: row.authTime },
      });
      const record = await issueTokens(tx, { grantId: grant.id, clientId: client.id, userId: row.userId, scopes, refreshScopes: scopes, ...dpopBinding(client, context), audience: context.audience }, CLIENT_GRANT_TYPE);
      await recordEventInTx(tx, { type: "token.issued", userId: row.userId, clientId: client.clientId, detail: { grant_type: CLIENT_GRANT_TYPE, scope: record.scope } });
      return record;
    });
  } catch (error) {
    if (!(error instanceof LostClaim)) throw error;
    throw new OAuthError("invalid_grant", {}, "device code used concurrently");
  }
}
