// Self-service sign-up (/signup; docs/rules/accounts.md#sign-up-and-confirmation). The answer is the same
// whether or not the address already has an account, so that sign-up cannot tell anyone who has one:
//  - a new address gets an unconfirmed account and a confirmation link (single-use, 24 hours, through the
//    outbox). Until it is confirmed the account can sign in, but no other mail goes to that address;
//  - an address with a confirmed account: nothing about the account changes, and its owner gets a note that
//    someone tried;
//  - an address with an unconfirmed account: nothing is sent (it may get no mail but a confirmation, and a
//    fresh confirmation would let whoever made that account have it confirmed by the address's owner); the
//    account's holder can send the link again once signed in.
// Both paths hash the password and render a mail, so that they take about the same time. Sign-ups are limited
// per client address (SIGNUP_LIMIT_PER_ADDRESS; an IPv6 address counts by its /64), the slot taken before the
// password hash in one atomic step (src/limits/limiter.ts), so that a burst sent at once passes at most the
// limit; it is given back only when the work fails before deciding (the hashing pool is full). Each address
// gets at most a few account mails a day (src/accounts/account-mail.ts).
import { z } from "zod";
import { recordEvent } from "@/audit/record-event";
import { deliverSoon } from "@/email/deliver-soon";
import { enqueueMail, type OutgoingMail } from "@/email/outbox";
import { parseInput } from "@/http/validate";
import { nowMs } from "@/clock";
import { addressKey, isRateLimited, reserve, withReservation, type Limit, type Reservation } from "@/limits/limiter";
import { randomSecret } from "@/secrets";
import { db, write } from "@/db/client";
import { hashPassword } from "@/users/passwords";
import { ZEmail, ZName, ZPassword } from "@/users/schemas";
import { issueAccountToken } from "@/accounts/account-tokens";
import { accountMailAllowed, renderSignupAttempt, renderVerifyEmail, VERIFY_EMAIL_TTL_MS } from "@/accounts/account-mail";

export const SIGNUP_LIMIT_PER_ADDRESS: Limit = { max: 10, windowMs: 3600 * 1000 };

export const ZSignUp = z.object({
  email: ZEmail,
  password: ZPassword,
  name: ZName.optional(),
});
export type TSignUp = z.input<typeof ZSignUp>;

/** What sign-up answers, for every address alike. */
export type SignUpResult = { email: string };

/**
 * `ip` is the client address (docs/rules/endpoints.md#client-address). Throws 400 for malformed input, 429
 * over the address's limit.
 */
export async function signUp(input: TSignUp & { ip: string }): Promise<SignUpResult> {
  const { email, password, name } = parseInput(ZSignUp, input);
  let taken: Reservation;
  try {
    taken = await reserve([{ key: `signup:${addressKey(input.ip)}`, limit: SIGNUP_LIMIT_PER_ADDRESS }]);
  } catch (error) {
    if (isRateLimited(error)) await recordEvent({ type: "rate_limited", ip: input.ip, detail: { limit: "signup" } });
    throw error;
  }
  return withReservation(taken, () => signUpWork(email, password, name));
}

async function signUpWork(email: string, password: string, name: string | undefined): Promise<SignUpResult> {
  // Both paths do the same expensive work (hash the password, render both mails), so that the time taken
  // does not tell whether the address has an account.
  const [passwordHash, existing] = await Promise.all([hashPassword(password), (await db()).user.findUnique({ where: { email } })]);
  const person = { name: existing?.name ?? name ?? email.split("@")[0]!, email };
  const token = randomSecret();
  const [confirmation, note] = await Promise.all([
    renderVerifyEmail(person, token, new Date(nowMs() + VERIFY_EMAIL_TTL_MS)),
    renderSignupAttempt(person),
  ]);
  if (!existing) {
    const created = await createUnconfirmed({ ...person, passwordHash, token, mail: confirmation });
    if (created) return { email };
    // A concurrent sign-up with the same address won: answer as for an existing account.
  }
  await noteAttempt(email, existing ? note : null);
  return { email };
}

/** The new account and its confirmation mail, in one transaction; false if the address was taken meanwhile. */
async function createUnconfirmed(options: { email: string; name: string; passwordHash: string; token: string; mail: OutgoingMail }): Promise<boolean> {
  const { token, mail } = options;
  let mailId: number | null;
  try {
    mailId = await write(async (tx) => {
      const user = await tx.user.create({ data: { email: options.email, name: options.name, passwordHash: options.passwordHash, emailVerifiedAt: null } });
      const issued = await issueAccountToken(tx, { token, userId: user.id, purpose: "verify_email", email: options.email, ttlMs: VERIFY_EMAIL_TTL_MS });
      if (!(await accountMailAllowed(tx, options.email))) return null;
      return enqueueMail(tx, mail, { accountTokenId: issued.id });
    });
  } catch (error) {
    if ((error as { code?: string }).code === "P2002") return false;
    throw error;
  }
  if (mailId !== null) deliverSoon([mailId]);
  return true;
}

/** Someone signed up with an address that has an account: tell a confirmed owner; never the unconfirmed. */
async function noteAttempt(email: string, note: OutgoingMail | null): Promise<void> {
  const user = await (await db()).user.findUniqueOrThrow({ where: { email } });
  // `note` greets the account found at first; after losing a race to a concurrent sign-up it is rendered anew.
  const mail = user.emailVerifiedAt ? (note ?? (await renderSignupAttempt(user))) : null;
  if (!mail) return;
  const mailId = await write(async (tx) => {
    if (!(await accountMailAllowed(tx, email))) return null;
    return enqueueMail(tx, mail);
  });
  if (mailId !== null) deliverSoon([mailId]);
}
