// The account-lifecycle step behind the two mailed links that prove who reads an address
// (docs/rules/accounts.md#unconfirmed-accounts, docs/rules/accounts.md#password-reset): confirming it
// (/verify-email, src/accounts/verify-email.ts) and choosing a new password (/reset-password,
// src/accounts/reset-password.ts). Both use a single-use token bound to the address it was mailed to
// (src/accounts/account-tokens.ts), and both run here, in ONE transaction with everything they undo and their
// audit events, so that nobody ever sees half of it:
//  - the token is claimed first (of concurrent uses exactly one goes on), and applies only while the account
//    still has the address it was mailed to (else nothing changes and the token stays unused);
//  - the FIRST confirmation of the address (by its link, or by a password reset: whoever reads the mailbox
//    owns the address) undoes everything the account did before it, since whoever signed up may not be the
//    address's owner (account pre-hijacking): its clients are deleted (with every grant and token anyone got
//    through them), its grants and tokens revoked, its device approvals not yet collected withdrawn, and its
//    consents forgotten;
//  - EVERY password reset revokes every grant and token of the account, withdraws its device approvals not
//    yet collected, forgets its consents (apps must ask again) and signs out every browser session
//    (sessionVersion, as "sign out everywhere"); it also uses up the account's other reset links and forgets
//    the failed sign-ins counted against the address, so that the owner can sign in at once.
// Revocation reaches the validated-token caches the way every revocation does: the commit goes through
// write() (on PostgreSQL the pool whose connections hold back a commit that changed a token, grant, user or
// client row until no instance can still answer from its cache: src/db/pg-token-cache.ts; on SQLite
// every reader asks data_version: src/db/fast-sql.ts).
import { nowMs } from "@/clock";
import { recordEventInTx } from "@/audit/record-event";
import { write, type Tx } from "@/db/client";
import { signOutEverywhereInTx } from "@/users/sign-out-everywhere";
import { logoutsQueued } from "@/browser-sessions/logout-queued";
import { claimAccountToken } from "@/accounts/account-tokens";

export type AccountStep = { purpose: "verify_email" } | { purpose: "reset_password"; passwordHash: string };

export type AccountStepOutcome =
  /** Done: the address (and, for a reset, the password) of this account. */
  | { state: "done"; userId: number; email: string; firstConfirmation: boolean }
  /** The token was not claimed (unknown, used, expired or of another purpose): the caller says which. */
  | { state: "unclaimed" }
  /** The account no longer has the address the token was mailed to: nothing changed, the token is unused. */
  | { state: "address_changed" };

class AddressChanged extends Error {}

/** Uses `token` for `step` and applies it with everything it undoes, in one transaction. */
export async function takeAccountStep(token: string, step: AccountStep): Promise<AccountStepOutcome> {
  let logouts: number[] = [];
  try {
    const outcome = await write(async (tx): Promise<AccountStepOutcome> => {
      const claimed = await claimAccountToken(tx, token, step.purpose);
      if (!claimed) return { state: "unclaimed" };
      const at = new Date(nowMs());
      const reset = step.purpose === "reset_password";
      const { userId, email } = claimed;
      if (reset) {
        const changed = await tx.user.updateMany({ where: { id: userId, email }, data: { passwordHash: step.passwordHash } });
        if (changed.count !== 1) throw new AddressChanged();
      }
      // One conditional write decides which confirmation is the first (a concurrent one waits for its row).
      const confirmed = await tx.user.updateMany({ where: { id: userId, email, emailVerifiedAt: null }, data: { emailVerifiedAt: at } });
      const firstConfirmation = confirmed.count === 1;
      if (!reset && !firstConfirmation) {
        // Confirmed already (by a reset meanwhile), or the address changed since the link was mailed.
        const user = await tx.user.findUnique({ where: { id: userId }, select: { email: true } });
        if (user?.email !== email) throw new AddressChanged();
      }
      const via = reset ? "password reset" : "link";
      if (firstConfirmation) {
        await recordEventInTx(tx, { type: "account.confirmed", userId, detail: { via } });
        await deleteClientsInTx(tx, userId);
      }
      if (reset) {
        logouts = await signOutEverywhereInTx(tx, userId);
        await tx.accountToken.updateMany({ where: { userId, purpose: "reset_password", usedAt: null }, data: { usedAt: at } });
        await forgetFailedSignIns(tx, email);
        await recordEventInTx(tx, { type: "password.reset", userId });
      }
      if (firstConfirmation || reset) await revokeEverythingInTx(tx, userId, at, reset ? "password reset" : "address confirmed");
      return { state: "done", userId, email, firstConfirmation };
    });
    // The reset ended every session: the clients they signed in to are told (docs/rules/openid-connect.md#back-channel-logout).
    logoutsQueued(logouts);
    return outcome;
  } catch (error) {
    if (error instanceof AddressChanged) return { state: "address_changed" };
    throw error;
  }
}

/** The account's clients go, and with them (by cascade) every grant, token, code and consent made through them. */
async function deleteClientsInTx(tx: Tx, userId: number): Promise<void> {
  const clients = await tx.client.findMany({ where: { ownerId: userId }, select: { id: true, clientId: true } });
  if (clients.length === 0) return;
  await tx.client.deleteMany({ where: { id: { in: clients.map((client) => client.id) } } });
  for (const client of clients) {
    await recordEventInTx(tx, { type: "client.deleted", userId, clientId: client.clientId, detail: { via: "address confirmed" } });
  }
}

/**
 * Revokes every grant of the account and every token in them, withdraws its device approvals that no device
 * has collected yet, and forgets its consents. Grant rows first, as every revocation does (src/oauth/tokens.ts
 * revokeGrantInTx): a refresh rotating at the same time either sees its grant revoked, or committed first and
 * its new tokens are revoked here with the rest.
 */
async function revokeEverythingInTx(tx: Tx, userId: number, at: Date, reason: string): Promise<void> {
  const grants = await tx.grant.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: at } });
  const access = await tx.accessToken.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: at } });
  const refresh = await tx.refreshToken.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: at } });
  // An approval the device has not collected would start a grant after this (RFC 8628 3.5: access_denied).
  const devices = await tx.deviceAuthorization.updateMany({ where: { userId, status: "approved", usedAt: null }, data: { status: "denied" } });
  const consents = await tx.consent.deleteMany({ where: { userId } });
  if (grants.count + access.count + refresh.count + devices.count > 0) {
    await recordEventInTx(tx, { type: "token.revoked", userId, detail: { reason, grants: grants.count, tokens: access.count + refresh.count, device_approvals: devices.count } });
  }
  if (consents.count > 0) await recordEventInTx(tx, { type: "consent.revoked", userId, detail: { reason, consents: consents.count } });
}

/** The sign-in failures counted against the address (src/users/sign-in.ts: `signin:<email>[:<address>]`). */
async function forgetFailedSignIns(tx: Tx, email: string): Promise<void> {
  const prefix = `signin:${email}`;
  const rows = await tx.failedAttempt.findMany({ where: { key: { startsWith: prefix } }, select: { id: true, key: true } });
  // Exact keys only, whatever a database makes of wildcard characters in an address.
  const ids = rows.filter((row) => row.key === prefix || row.key.startsWith(`${prefix}:`)).map((row) => row.id);
  if (ids.length) await tx.failedAttempt.deleteMany({ where: { id: { in: ids } } });
}
