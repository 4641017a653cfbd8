// Choosing a new password from the mailed link (/reset-password?token=...;
// docs/rules/accounts.md#password-reset).
// Opening the page changes nothing (describePasswordReset: a read, since mail scanners follow links); only
// the form's POST (resetPassword, through a server action that Next checks for our own Origin) uses the token.
// The token is single-use (one conditional write, the first statement of the transaction: of concurrent
// uses exactly one wins), valid one hour, and applies only while the account has the address it was mailed
// to. The new password is hashed (argon2id) before the transaction opens; the transaction itself is the
// account-lifecycle step of src/accounts/lifecycle.ts: it sets the password, confirms the address when it was
// not (whoever reads the mailbox owns the address; a first confirmation also deletes the account's clients),
// revokes every grant and token of the account, forgets its consents (apps must ask again), signs out every
// browser session, uses up the account's other reset links and forgets the failed sign-ins counted against
// the address.
import { parseInput } from "@/http/validate";
import { db } from "@/db/client";
import { hashPassword } from "@/users/passwords";
import { ZPassword } from "@/users/schemas";
import { z } from "zod";
import { accountTokenState } from "@/accounts/account-tokens";
import { takeAccountStep } from "@/accounts/lifecycle";

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

/**
 * Uses the token and sets the new password: `reset`, or why not. Throws 400 for a password that breaks the
 * rules, before the token is touched (a typo does not use up the link).
 */
export async function resetPassword(input: { token: string; password: unknown }): Promise<PasswordReset> {
  const { password } = parseInput(ZResetPassword, { password: input.password });
  const token = input.token;
  if (!token || token.length > 200) return { state: "unknown" };
  const passwordHash = await hashPassword(password);
  const outcome = await takeAccountStep(token, { purpose: "reset_password", passwordHash });
  if (outcome.state === "done") return { state: "reset", email: outcome.email };
  if (outcome.state === "address_changed") return { state: "unknown" };
  const found = await accountTokenState(token, "reset_password");
  return found.state === "live" ? { state: "unknown" } : found;
}
