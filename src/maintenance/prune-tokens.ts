// `tokens:prune` (docs/rules/operations.md#admin-cli): deletes the rows that can no longer do anything, once
// they are past their keeping time. A day is kept after a token or code ends so that a late presentation still
// gets its precise answer (revoked, expired, replayed) and support can see what happened; permission requests
// are kept 30 days after they end, while their token answers 410
// (docs/rules/permission-requests.md#deleting-and-declining), and are 404 afterwards. Their mail goes with
// them (an outbox row may hold the token until it is sent:
// docs/rules/permission-requests.md#mail-and-the-outbox); account tokens (e-mail confirmation) go a day after
// they were used or expired, with their mail; mail linked to nothing (the "someone tried to sign up" note)
// goes 30 days after it was written. DPoP proofs' jti rows once their proof could no longer pass the iat check
// (RFC 9449 11.1: a replay is refused by iat from then on), and client assertions' jti rows once the assertion
// expired (docs/rules/tokens.md#client-assertions: a replay is refused by exp from then on); pushed authorization requests and initial access
// tokens a day after they expired. Back-channel logout (docs/rules/openid-connect.md#back-channel-logout): a
// browser session's record of the clients it signed in to, a day after the session ended (a session that has
// not ended may still be in use, however old); a logout token's queue row 30 days after it was written, once
// it was sent or failed for good (a row still pending or being sent is left to the sweep).
//
// What is NOT removed: a refresh token that was used but has not expired. A second presentation of it must
// still be recognised as a reuse and revoke its grant (docs/rules/tokens.md#refresh, RFC 9700 4.14.2);
// deleting it would turn that into "unknown token" and leave the rest of the grant alive.
import { nowMs } from "@/clock";
import { write } from "@/db/client";

export const TOKEN_KEEP_MS = 24 * 3600 * 1000;
export const PERMISSION_REQUEST_KEEP_MS = 30 * 24 * 3600 * 1000;
/** Security events are kept 90 days (docs/rules/operations.md#audit-log). */
export const AUDIT_EVENT_KEEP_MS = 90 * 24 * 3600 * 1000;

export type PruneCounts = {
  access_tokens: number;
  refresh_tokens: number;
  authorization_codes: number;
  grants: number;
  failed_attempts: number;
  permission_requests: number;
  device_authorizations: number;
  account_tokens: number;
  mail_messages: number;
  dpop_proofs: number;
  client_assertions: number;
  session_clients: number;
  logout_deliveries: number;
  pushed_requests: number;
  registration_tokens: number;
  audit_events: number;
};

/**
 * Deletes expired and revoked tokens and codes, emptied revoked or idle grants, old failed password attempts,
 * ended permission requests and account tokens past their keeping time, and their mail; returns how many of each. Each kind is its own short
 * transaction, so that a large prune never holds the (SQLite) write lock for long; running it again, or
 * twice at once, is harmless.
 */
export async function pruneTokens(): Promise<PruneCounts> {
  const at = nowMs();
  const tokenCutoff = new Date(at - TOKEN_KEEP_MS);
  const requestCutoff = new Date(at - PERMISSION_REQUEST_KEEP_MS);
  const ended = [{ expiresAt: { lt: tokenCutoff } }, { revokedAt: { lt: tokenCutoff } }];

  const accessTokens = await write((tx) => tx.accessToken.deleteMany({ where: { OR: ended } }));
  const refreshTokens = await write((tx) => tx.refreshToken.deleteMany({ where: { OR: ended } }));
  // A used code is kept until then as well, so that a replay within the day still revokes its grant.
  const codes = await write((tx) => tx.authorizationCode.deleteMany({ where: { expiresAt: { lt: tokenCutoff } } }));
  // Grants go last, and only once nothing points at them any more. Deleting every grant revoked a day ago and
  // letting the cascade take its tokens would give the same result today (revoking a grant revokes all its
  // tokens in the same transaction), but it would make the grant rule override the token rules above: a
  // token that some future path left unrevoked under a revoked grant would vanish with no rule saying so.
  // This way each token's own rule alone decides when it goes, and the grant follows it.
  // A grant that was never revoked goes the same way once it is idle: no token or code left (each went by
  // its own rule) and no token issued for a day, as with an implicit grant whose last token expired.
  const grants = await write((tx) =>
    tx.grant.deleteMany({
      where: {
        OR: [{ revokedAt: { lt: tokenCutoff } }, { lastUsedAt: { lt: tokenCutoff } }],
        accessTokens: { none: {} },
        refreshTokens: { none: {} },
        authorizationCodes: { none: {} },
      },
    }),
  );
  // The longest rate-limit window is an hour (src/limits/limiter.ts); a day is ample.
  const failedAttempts = await write((tx) => tx.failedAttempt.deleteMany({ where: { createdAt: { lt: tokenCutoff } } }));
  // Ended (redeemed, declined, deleted) requests count from endedAt; those that were never ended from expiresAt.
  // Their mail first, in the same transaction, so that it is counted (the foreign key would cascade anyway).
  const endedRequests = { OR: [{ endedAt: { lt: requestCutoff } }, { endedAt: null, expiresAt: { lt: requestCutoff } }] };
  const requests = await write(async (tx) => {
    const mails = await tx.mailMessage.deleteMany({ where: { permissionRequest: { is: endedRequests } } });
    const rows = await tx.permissionRequest.deleteMany({ where: endedRequests });
    return { count: rows.count, mails: mails.count };
  });
  const endedAccountTokens = { OR: [{ expiresAt: { lt: tokenCutoff } }, { usedAt: { lt: tokenCutoff } }] };
  const accountTokens = await write(async (tx) => {
    const mails = await tx.mailMessage.deleteMany({ where: { accountToken: { is: endedAccountTokens } } });
    const rows = await tx.accountToken.deleteMany({ where: endedAccountTokens });
    return { count: rows.count, mails: mails.count };
  });
  // Mail linked to nothing that is still kept (notes without a token, and mail written before the links
  // existed), once it is older than any request it could announce; a message being sent is left alone.
  const unlinkedMail = await write((tx) =>
    tx.mailMessage.deleteMany({
      where: { permissionRequestId: null, accountTokenId: null, createdAt: { lt: requestCutoff }, status: { not: "sending" } },
    }),
  );

  // Device authorizations (RFC 8628) a day past their expiry: a late poll of one is then invalid_grant
  // instead of expired_token. The tokens they gave belong to their grants and stay.
  const devices = await write((tx) => tx.deviceAuthorization.deleteMany({ where: { expiresAt: { lt: tokenCutoff } } }));
  const proofs = await write((tx) => tx.dpopProof.deleteMany({ where: { expiresAt: { lt: new Date(at) } } }));
  // Client assertions' jti (docs/rules/tokens.md#client-assertions), once the assertion has expired.
  const assertions = await write((tx) => tx.clientAssertion.deleteMany({ where: { expiresAt: { lt: new Date(at) } } }));
  const sessionClients = await write((tx) => tx.sessionClient.deleteMany({ where: { endedAt: { lt: tokenCutoff } } }));
  const logoutDeliveries = await write((tx) =>
    tx.logoutDelivery.deleteMany({ where: { status: { in: ["sent", "failed"] }, createdAt: { lt: requestCutoff } } }),
  );
  const pushed = await write((tx) => tx.pushedAuthorizationRequest.deleteMany({ where: { expiresAt: { lt: tokenCutoff } } }));
  const registrationTokens = await write((tx) => tx.registrationToken.deleteMany({ where: { expiresAt: { lt: tokenCutoff } } }));
  const auditEvents = await write((tx) => tx.auditEvent.deleteMany({ where: { at: { lt: new Date(at - AUDIT_EVENT_KEEP_MS) } } }));

  return {
    access_tokens: accessTokens.count,
    refresh_tokens: refreshTokens.count,
    authorization_codes: codes.count,
    grants: grants.count,
    failed_attempts: failedAttempts.count,
    permission_requests: requests.count,
    device_authorizations: devices.count,
    account_tokens: accountTokens.count,
    mail_messages: requests.mails + accountTokens.mails + unlinkedMail.count,
    dpop_proofs: proofs.count,
    client_assertions: assertions.count,
    session_clients: sessionClients.count,
    logout_deliveries: logoutDeliveries.count,
    pushed_requests: pushed.count,
    registration_tokens: registrationTokens.count,
    audit_events: auditEvents.count,
  };
}
