// Confirming an address from the mailed link (docs/rules/accounts.md#sign-up-and-confirmation).
// /verify-email?token=... shows what the link would confirm (describeVerification: a read, since mail scanners
// follow links and a GET never changes anything) and confirms only when the reader presses the button
// (confirmEmail: a POST, through a server action, which Next checks for our own Origin). The token is
// single-use and confirms exactly the address it was mailed to, while the account still has it. Confirming is
// the account-lifecycle step of src/accounts/lifecycle.ts: the first confirmation of an address undoes
// everything the account did before it (clients deleted, grants and tokens revoked, consents forgotten). Until
// then the account can sign in but cannot register clients, approve apps or get tokens (emailConfirmed); a
// signed-in user whose address is not confirmed can ask for a new link (resendVerification), within the
// account-mail limit of src/accounts/account-mail.ts.
import { nowMs } from "@/clock";
import { deliverSoon } from "@/email/deliver-soon";
import { enqueueMail } from "@/email/outbox";
import { digest, randomSecret } from "@/secrets";
import { db, write } from "@/db/client";
import { accountTokenState, issueAccountToken } from "@/accounts/account-tokens";
import { takeAccountStep } from "@/accounts/lifecycle";
import { accountMailAllowed, renderVerifyEmail, VERIFY_EMAIL_TTL_MS } from "@/accounts/account-mail";

export type Verification =
  | { state: "ready"; email: string; name: string; createdAt: Date }
  | { state: "confirmed"; email: string }
  | { state: "used" | "expired" | "unknown" };

/**
 * A used link whose address is confirmed now (its account still has it): say so, instead of an error, when the
 * person reloads the page or presses the button again (no error box after a reload of a success).
 */
async function confirmedWith(token: string): Promise<Verification | null> {
  const row = await (await db()).accountToken.findUnique({
    where: { digest: digest(token) },
    select: { purpose: true, email: true, user: { select: { email: true, emailVerifiedAt: true } } },
  });
  if (!row || row.purpose !== "verify_email" || row.user.email !== row.email || !row.user.emailVerifiedAt) return null;
  return { state: "confirmed", email: row.email };
}

/** What the link would confirm; changes nothing. */
export async function describeVerification(token: string): Promise<Verification> {
  const found = await accountTokenState(token, "verify_email");
  if (found.state === "used") return (await confirmedWith(token)) ?? found;
  if (found.state !== "live") return found;
  const user = await (await db()).user.findUnique({ where: { id: found.userId } });
  if (!user || user.email !== found.email) return { state: "unknown" };
  if (user.emailVerifiedAt) return { state: "confirmed", email: user.email };
  return { state: "ready", email: user.email, name: user.name, createdAt: user.createdAt };
}

/** Uses the token and confirms its address: `confirmed`, or why not (`used` for every use but the first). Of concurrent uses exactly one confirms. */
export async function confirmEmail(token: string): Promise<Verification> {
  if (!token || token.length > 200) return { state: "unknown" };
  const outcome = await takeAccountStep(token, { purpose: "verify_email" });
  if (outcome.state === "done") return { state: "confirmed", email: outcome.email };
  const found = await accountTokenState(token, "verify_email");
  return found.state === "live" ? { state: "unknown" } : found;
}

export type Resent = { state: "sent" | "already_confirmed" | "limited" };

/** A new confirmation link for a signed-in user whose address is not confirmed yet. */
export async function resendVerification(userId: number): Promise<Resent> {
  const user = await (await db()).user.findUniqueOrThrow({ where: { id: userId } });
  if (user.emailVerifiedAt) return { state: "already_confirmed" };
  const token = randomSecret();
  const mail = await renderVerifyEmail(user, token, new Date(nowMs() + VERIFY_EMAIL_TTL_MS));
  let mailId: number;
  try {
    mailId = await write(async (tx) => {
      // The first statement writes (SQLite: a read first could not be upgraded under a concurrent writer);
      // over the limit, the thrown Limited rolls the token back.
      const issued = await issueAccountToken(tx, { token, userId: user.id, purpose: "verify_email", email: user.email, ttlMs: VERIFY_EMAIL_TTL_MS });
      if (!(await accountMailAllowed(tx, user.email))) throw new Limited();
      return enqueueMail(tx, mail, { accountTokenId: issued.id });
    });
  } catch (error) {
    if (error instanceof Limited) return { state: "limited" };
    throw error;
  }
  deliverSoon([mailId]);
  return { state: "sent" };
}

class Limited extends Error {}

export { emailConfirmed } from "@/accounts/confirmed";
