// Password sign-in for the service's own pages (next-auth's credentials provider calls this; CONTRACT.md 14,
// issue 13 finding 4). Failures are limited per e-mail and client address (10 in 15 minutes) and per e-mail
// across all addresses (50 in 15 minutes): while either limit is reached, even the right password is refused
// until the window passes. The per-address limit stops one attacker from locking a person out; the higher
// per-e-mail ceiling stops a password spray from many addresses. Unknown e-mails cost the same hashing time
// and count the same. Audit events (CONTRACT.md 11): signin.succeeded, signin.failed, rate_limited.
import { recordEvent, recordEventInTx } from "@/audit/record-event";
import { db, write } from "@/server/db";
import { limitedFor, recordFailuresInTx, type Limit } from "@/oauth/rate-limit";
import { verifyPassword } from "@/users/passwords";

const WINDOW_MS = 15 * 60 * 1000;
export const SIGNIN_LIMIT_PER_ADDRESS: Limit = { max: 10, windowMs: WINDOW_MS };
export const SIGNIN_LIMIT_PER_EMAIL: Limit = { max: 50, windowMs: WINDOW_MS };

export type SignInResult =
  | { ok: true; user: { id: number; name: string; email: string; sessionVersion: number } }
  | { ok: false; reason: "invalid" | "rate_limited" };

/** `ip` is the client address (src/http/client-address.ts). */
export async function signInWithPassword(options: { email: string; password: string; ip: string }): Promise<SignInResult> {
  const email = options.email.trim().toLowerCase();
  const byAddress = `signin:${email}:${options.ip}`;
  const byEmail = `signin:${email}`;
  const client = await db();
  const [addressWait, emailWait, user] = await Promise.all([
    limitedFor(byAddress, SIGNIN_LIMIT_PER_ADDRESS),
    limitedFor(byEmail, SIGNIN_LIMIT_PER_EMAIL),
    email ? client.user.findUnique({ where: { email } }) : null,
  ]);
  if (addressWait !== null || emailWait !== null) {
    await recordEvent({ type: "rate_limited", userId: user?.id ?? null, ip: options.ip, detail: { limit: "signin" } });
    return { ok: false, reason: "rate_limited" };
  }
  const ok = await verifyPassword(user?.passwordHash ?? null, options.password);
  if (!user || !ok) {
    await write(async (tx) => {
      await recordFailuresInTx(tx, [byAddress, byEmail]);
      await recordEventInTx(tx, { type: "signin.failed", userId: user?.id ?? null, ip: options.ip, detail: { reason: user ? "wrong password" : "unknown e-mail" } });
    });
    return { ok: false, reason: "invalid" };
  }
  await recordEvent({ type: "signin.succeeded", userId: user.id, ip: options.ip });
  return { ok: true, user: { id: user.id, name: user.name, email: user.email, sessionVersion: user.sessionVersion } };
}
