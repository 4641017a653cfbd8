// Choosing a new password from the mailed link (/reset-password?token=...; CONTRACT.md 12 and 14, issue 11).
// Opening the page changes nothing (describePasswordReset: a read, since mail scanners follow links); only
// the form's POST (resetPassword, through a server action that Next checks for our own Origin) uses the token.
// The token is single-use (one conditional write, the first statement of the transaction: of concurrent
// uses exactly one wins) and valid one hour. In the same transaction the reset:
//  - sets the new password (argon2id, hashed before the transaction opens);
//  - signs out every browser session of the account (sessionVersion + 1, as "sign out everywhere");
//  - marks the address confirmed when it was not: whoever reads the mailbox owns the address;
//  - uses up the account's other reset links, so that an older mail cannot change the password again;
//  - forgets the failed sign-ins counted against the address, so that the owner can sign in at once.
// It revokes nothing else: apps the person approved keep their tokens (README, "Password reset").
import { nowMs } from "@/clock";
import { parseInput } from "@/http/validate";
import { db, write, type Tx } from "@/server/db";
import { hashPassword } from "@/users/passwords";
import { ZPassword } from "@/users/schemas";
import { z } from "zod";
import { accountTokenState, claimAccountToken } from "@/accounts/account-tokens";

export type PasswordReset =
  | { state: "ready"; email: string; name: string; expiresAt: Date }
  | { state: "reset"; email: string }
  | { state: "used" | "expired" | "unknown" };

/** What the link would reset; changes nothing. */
export async function describePasswordReset(token: string): Promise<PasswordReset> {
  const found = await accountTokenState(token, "reset_password");
  if (found.state !== "live") return found;
  const user = await (await db()).user.findUnique({ where: { id: found.userId } });
  if (!user || user.email !== found.email) return { state: "unknown" };
  return { state: "ready", email: user.email, name: user.name, expiresAt: found.expiresAt };
}

export const ZResetPassword = z.object({ password: ZPassword });

/** The sign-in failures counted against the address (src/users/sign-in.ts: `signin:<email>[:<address>]`). */
async function forgetFailedSignIns(tx: Tx, email: string): Promise<void> {
  const prefix = `signin:${email}`;
  const rows = await tx.failedAttempt.findMany({ where: { key: { startsWith: prefix } }, select: { id: true, key: true } });
  // Exact keys only, whatever a database makes of wildcard characters in an address.
  const ids = rows.filter((row) => row.key === prefix || row.key.startsWith(`${prefix}:`)).map((row) => row.id);
  if (ids.length) await tx.failedAttempt.deleteMany({ where: { id: { in: ids } } });
}

/** The account's address changed since the link was mailed: the link no longer applies. */
class AddressChanged extends Error {}

/**
 * Uses the token and sets the new password: `reset`, or why not. Throws 400 for a password that breaks the
 * rules, before the token is touched (a typo does not use up the link).
 */
export async function resetPassword(input: { token: string; password: unknown }): Promise<PasswordReset> {
  const { password } = parseInput(ZResetPassword, { password: input.password });
  const token = input.token;
  if (!token || token.length > 200) return { state: "unknown" };
  const passwordHash = await hashPassword(password);
  let email: string | null;
  try {
    email = await write(async (tx) => {
      const claimed = await claimAccountToken(tx, token, "reset_password");
      if (!claimed) return null;
      const at = new Date(nowMs());
      const changed = await tx.user.updateMany({
        where: { id: claimed.userId, email: claimed.email },
        data: { passwordHash, sessionVersion: { increment: 1 } },
      });
      if (changed.count !== 1) throw new AddressChanged();
      await tx.user.updateMany({ where: { id: claimed.userId, emailVerifiedAt: null }, data: { emailVerifiedAt: at } });
      await tx.accountToken.updateMany({ where: { userId: claimed.userId, purpose: "reset_password", usedAt: null }, data: { usedAt: at } });
      await forgetFailedSignIns(tx, claimed.email);
      return claimed.email;
    });
  } catch (error) {
    if (error instanceof AddressChanged) return { state: "unknown" };
    throw error;
  }
  if (email !== null) return { state: "reset", email };
  const found = await accountTokenState(token, "reset_password");
  return found.state === "live" ? { state: "unknown" } : found;
}
