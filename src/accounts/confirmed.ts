// Whether an account's address is confirmed (account pre-hijacking:
// docs/rules/accounts.md#unconfirmed-accounts). Until it is, the account can sign in, see that it must confirm
// and ask for the mail again, but registers no client (src/clients/create-client.ts), approves no app
// (src/consent/decide-consent.ts) and gets no token by any grant (the grants check it where they issue:
// src/oauth/tokens.ts, and the refresh rotation). A confirmation only ever comes, never goes (nothing changes
// an address), so a check made before a write cannot let an unconfirmed account through: at worst it refuses
// one that was confirmed a moment later.
import { db } from "@/db/client";

/** Whether the user's address is confirmed (false for no such user). */
export async function emailConfirmed(userId: number): Promise<boolean> {
  const user = await (await db()).user.findUnique({ where: { id: userId }, select: { emailVerifiedAt: true } });
  return Boolean(user?.emailVerifiedAt);
}
