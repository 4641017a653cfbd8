// Confirming an address from the mailed link (CONTRACT.md 14; issue 13 finding 5). /verify-email?token=...
// shows what the link would confirm (describeVerification: a read, since mail scanners follow links and a GET
// never changes anything) and confirms only when the reader presses the button (confirmEmail: a POST, through
// a server action, which Next checks for our own Origin). The token is single-use and confirms exactly the
// address it was mailed to. A signed-in user whose address is not confirmed can ask for a new link
// (resendVerification), within the account-mail limit of src/accounts/account-mail.ts.
import { nowMs } from "@/clock";
import { deliverSoon } from "@/email/deliver-soon";
import { enqueueMail } from "@/email/outbox";
import { randomSecret } from "@/server/crypto";
import { db, write } from "@/server/db";
import { accountTokenState, claimAccountToken, issueAccountToken } from "@/accounts/account-tokens";
import { accountMailAllowed, renderVerifyEmail, VERIFY_EMAIL_TTL_MS } from "@/accounts/account-mail";

export type Verification =
  | { state: "ready"; email: string; name: string; createdAt: Date }
  | { state: "confirmed"; email: string }
  | { state: "used" | "expired" | "unknown" };

/** What the link would confirm; changes nothing. */
export async function describeVerification(token: string): Promise<Verification> {
  const found = await accountTokenState(token, "verify_email");
  if (found.state !== "live") return found;
  const user = await (await db()).user.findUnique({ where: { id: found.userId } });
  if (!user || user.email !== found.email) return { state: "unknown" };
  if (user.emailVerifiedAt) return { state: "confirmed", email: user.email };
  return { state: "ready", email: user.email, name: user.name, createdAt: user.createdAt };
}

/** Uses the token and confirms its address: `confirmed`, or why not. Of concurrent uses exactly one confirms. */
export async function confirmEmail(token: string): Promise<Verification> {
  if (!token || token.length > 200) return { state: "unknown" };
  const confirmed = await write(async (tx) => {
    const claimed = await claimAccountToken(tx, token, "verify_email");
    if (!claimed) return null;
    // Only the address the link was mailed to, and only while the account still has it.
    await tx.user.updateMany({ where: { id: claimed.userId, email: claimed.email, emailVerifiedAt: null }, data: { emailVerifiedAt: new Date(nowMs()) } });
    return claimed.email;
  });
  if (confirmed !== null) return { state: "confirmed", email: confirmed };
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

/** Whether the user's address is confirmed (for the notice on the home page). */
export async function emailConfirmed(userId: number): Promise<boolean> {
  const user = await (await db()).user.findUnique({ where: { id: userId }, select: { emailVerifiedAt: true } });
  return Boolean(user?.emailVerifiedAt);
}
