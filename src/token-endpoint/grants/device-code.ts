// RFC 8628 3.4 and 3.5: Device Access Token Request and Response (docs/rules/tokens.md#device-flow).
//
// The device polls with grant_type urn:ietf:params:oauth:grant-type:device_code and its device_code:
// - a device code that is unknown or another client's, or that already gave its tokens: invalid_grant;
// - past expires_in: expired_token; after Deny: access_denied;
// - still pending: authorization_pending, or slow_down when polled sooner than `interval` after the last
//   poll, which then grows by 5 seconds for every later poll (3.5). The last poll time is compared and set
//   in one conditional write, so of two polls at once one is "too soon";
// - approved: the token record of docs/rules/tokens.md#token-response with a refresh token, exactly once: the
//   first poll claims the device code with one conditional write committed together with the grant, the
//   tokens and the token.issued event (src/db/fast-sql.ts issueForDeviceCode). A later poll is invalid_grant and revokes nothing: a device that retried a lost answer is no
//   attacker.
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { auditRow } from "@/audit/record-event";
import { ApiError } from "@/http/errors";
import { digest } from "@/secrets";
import { write } from "@/db/client";
import { deviceAuthorizationByDigest, issueForDeviceCode } from "@/db/fast-sql";
import { OAuthError } from "@/oauth/errors";
import { requiredParam } from "@/oauth/params";
import { storedScopes } from "@/oauth/scope";
import { dpopBinding, mintTokens, unconfirmedAccount, type TokenRecord } from "@/oauth/tokens";
import type { GrantContext } from "@/token-endpoint/grants/grant";

export const GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";
/** The client grant type (docs/rules/tokens.md#device-flow) whose clients may use this grant. */
export const CLIENT_GRANT_TYPE = "device_code";
export const SLOW_DOWN_STEP_SECONDS = 5;

export async function deviceCodeGrant(client: Client, params: Record<string, unknown>, context: GrantContext): Promise<TokenRecord> {
  // Validate
  if (client.grantType !== CLIENT_GRANT_TYPE) throw new OAuthError("unauthorized_client");
  const deviceCode = requiredParam(params, "device_code");
  const row = await deviceAuthorizationByDigest(digest(deviceCode)); // one statement (src/db/fast-sql.ts)
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

  // Respond: approved. Claim and issue, in one commit.
  if (row.userId === null) throw new OAuthError("invalid_grant", {}, "device code used concurrently");
  const issuedAt = now();
  const scopes = storedScopes(row.scopes);
  const minted = mintTokens({ grantId: 0, clientId: client.id, userId: row.userId, scopes, refreshScopes: scopes, ...dpopBinding(client, context), audience: context.audience }, issuedAt);
  const outcome = await issueForDeviceCode(row.id, {
    grant: { clientId: client.id, userId: row.userId, grantType: CLIENT_GRANT_TYPE, scopes: row.scopes, createdAt: issuedAt, authTime: row.authTime },
    access: minted.access,
    refresh: minted.refresh,
    audit: auditRow({ type: "token.issued", userId: row.userId, clientId: client.clientId, detail: { grant_type: CLIENT_GRANT_TYPE, scope: minted.record.scope } }),
  });
  if (outcome === "unconfirmed") throw unconfirmedAccount(CLIENT_GRANT_TYPE);
  if (outcome === "lost") throw new OAuthError("invalid_grant", {}, "device code used concurrently");
  return minted.record;
}
