// "Sign out everywhere" (docs/rules/accounts.md#password-reset): browser sessions carry the sessionVersion
// they were issued with (src/auth/session.ts), so one increment ends every session of the user on every
// instance at its next request. A password reset does it in its own transaction (src/accounts/lifecycle.ts).
// The same transaction queues a logout token for every client that received an id_token in one of those
// sessions (docs/rules/openid-connect.md#back-channel-logout).
import { write, type Tx } from "@/db/client";
import { endUserSessionsInTx } from "@/browser-sessions/session-clients";

/** Ends every browser session of the user, inside the caller's transaction. Returns the queued logout tokens' ids. */
export async function signOutEverywhereInTx(tx: Tx, userId: number): Promise<number[]> {
  await tx.user.update({ where: { id: userId }, data: { sessionVersion: { increment: 1 } } });
  return endUserSessionsInTx(tx, userId);
}

/** Ends every browser session of the user. Returns the queued logout tokens' ids. */
export async function signOutEverywhere(userId: number): Promise<number[]> {
  return write((tx) => signOutEverywhereInTx(tx, userId));
}
