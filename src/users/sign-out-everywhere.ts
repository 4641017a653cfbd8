// "Sign out everywhere" (docs/rules/accounts.md#password-reset): browser sessions carry the sessionVersion
// they were issued with (src/auth/session.ts), so one increment ends every session of the user on every
// instance at its next request. A password reset does it in its own transaction (src/accounts/lifecycle.ts).
import { write, type Tx } from "@/db/client";

/** Ends every browser session of the user, inside the caller's transaction. */
export async function signOutEverywhereInTx(tx: Tx, userId: number): Promise<void> {
  await tx.user.update({ where: { id: userId }, data: { sessionVersion: { increment: 1 } } });
}

/** Ends every browser session of the user. */
export async function signOutEverywhere(userId: number): Promise<void> {
  await write((tx) => signOutEverywhereInTx(tx, userId));
}
