// "Forgot your password?" (/forgot-password; docs/rules/accounts.md#password-reset). Someone types an address;
// if an account has it, a single-use link valid one hour is mailed to it (AccountToken `reset_password`,
// stored as its digest, through the outbox like every mail). The answer is the same whether or not the address
// has an account, and both paths do the same work (render the mail, count the request), so that neither the
// answer nor its time tells who has an account.
//
// Requests are limited per client address (RESET_LIMIT_PER_ADDRESS) and per typed address
// (RESET_LIMIT_PER_EMAIL; an IPv6 client address counts by its /64), counted for every request alike (a limit
// that only bit for existing accounts would tell them apart); over either, 429 for every address. The slots are
// taken by the first statement of the transaction that writes the mail (src/limits/limiter.ts), so that a burst
// sent at once passes at most the limit. The mail also counts toward the mailbox's daily cap on
// account mail (src/accounts/account-mail.ts); over that cap the answer is the same and nothing is sent.
//
// An unconfirmed address gets this mail too: it is how the owner of an address takes over an account that
// someone else registered with it (the reset confirms the address; src/accounts/reset-password.ts).
import { z } from "zod";
import { recordEvent } from "@/audit/record-event";
import { nowMs } from "@/clock";
import { deliverSoon } from "@/email/deliver-soon";
import { enqueueMail } from "@/email/outbox";
import { parseInput } from "@/http/validate";
import { addressKey, isRateLimited, reserveInTx, type Limit } from "@/limits/limiter";
import { randomSecret } from "@/secrets";
import { db, write } from "@/db/client";
import { ZEmail } from "@/users/schemas";
import { issueAccountToken } from "@/accounts/account-tokens";
import { accountMailAllowed, renderResetPassword, RESET_PASSWORD_TTL_MS } from "@/accounts/account-mail";

export const RESET_LIMIT_PER_ADDRESS: Limit = { max: 10, windowMs: 3600 * 1000 };
export const RESET_LIMIT_PER_EMAIL: Limit = { max: 5, windowMs: 3600 * 1000 };

export const ZRequestPasswordReset = z.object({ email: ZEmail });
export type TRequestPasswordReset = z.input<typeof ZRequestPasswordReset>;

/** The same for every address. */
export type PasswordResetRequested = { email: string };

/**
 * `ip` is the client address (docs/rules/endpoints.md#client-address). Throws 400 for a malformed address, 429
 * over a limit.
 */
export async function requestPasswordReset(input: TRequestPasswordReset & { ip: string }): Promise<PasswordResetRequested> {
  const { email } = parseInput(ZRequestPasswordReset, { email: input.email });
  const slots = [
    { key: `reset:${addressKey(input.ip)}`, limit: RESET_LIMIT_PER_ADDRESS },
    { key: `reset:${email}`, limit: RESET_LIMIT_PER_EMAIL },
  ];
  const user = await (await db()).user.findUnique({ where: { email } });
  // Rendered for every address, so that both paths take the same time.
  const token = randomSecret();
  const mail = await renderResetPassword({ name: user?.name ?? email.split("@")[0]!, email }, token, new Date(nowMs() + RESET_PASSWORD_TTL_MS));
  const mailId = await write(async (tx) => {
    // The first statement writes (SQLite: a read first could not be upgraded under a concurrent writer).
    await reserveInTx(tx, slots);
    if (!user || !(await accountMailAllowed(tx, user.email))) return null;
    const issued = await issueAccountToken(tx, { token, userId: user.id, purpose: "reset_password", email: user.email, ttlMs: RESET_PASSWORD_TTL_MS });
    return enqueueMail(tx, mail, { accountTokenId: issued.id });
  }).catch(async (error: unknown) => {
    if (isRateLimited(error)) await recordEvent({ type: "rate_limited", userId: user?.id ?? null, ip: input.ip, detail: { limit: "password reset" } });
    throw error;
  });
  if (mailId !== null) deliverSoon([mailId]);
  return { email };
}
