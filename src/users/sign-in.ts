// Password sign-in for the service's own pages (next-auth's credentials provider calls this;
// docs/rules/accounts.md#limits). Failures are limited per e-mail and client address (10 in 15 minutes), per
// e-mail across all addresses (50 in 15 minutes) and per client address across all e-mails (100 in 15 minutes;
// an IPv6 address counts by its /64): while any limit is reached, even the right password is refused until the
// window passes. The per e-mail and address limit stops one attacker from locking a person out; the higher
// per-e-mail ceiling stops a password spray from many addresses; the per-address ceiling stops one address
// from trying e-mail after e-mail (as Auth0's suspicious-IP throttling does). Each attempt takes its slot on
// all three before the password hash (src/limits/limiter.ts), so that a burst of attempts sent at once passes
// at most the limit, and gives it back when the password was right or the hash could not be done. Unknown
// e-mails cost the same hashing time and count the same. Audit events: signin.succeeded, signin.failed,
// rate_limited.
import { recordEvent, recordEventInTx } from "@/audit/record-event";
import { db, write } from "@/db/client";
import { addressKey, fullUntil, isRateLimited, reserve, type Limit, type Reservation } from "@/limits/limiter";
import { rememberRefusedAddress } from "@/limits/refused-addresses";
import { verifyPassword } from "@/users/passwords";

const WINDOW_MS = 15 * 60 * 1000;
export const SIGNIN_LIMIT_PER_EMAIL_AND_ADDRESS: Limit = { max: 10, windowMs: WINDOW_MS };
export const SIGNIN_LIMIT_PER_EMAIL: Limit = { max: 50, windowMs: WINDOW_MS };
export const SIGNIN_LIMIT_PER_CLIENT_ADDRESS: Limit = { max: 100, windowMs: WINDOW_MS };

export type SignInResult =
  | { ok: true; user: { id: number; name: string; email: string; sessionVersion: number } }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "rate_limited"; retryAfterSeconds: number };

/** The limits one attempt counts against. */
export function signInSlots(email: string, ip: string) {
  const address = addressKey(ip);
  return [
    { key: `signin:${email}:${address}`, limit: SIGNIN_LIMIT_PER_EMAIL_AND_ADDRESS },
    { key: `signin:${email}`, limit: SIGNIN_LIMIT_PER_EMAIL },
    { key: `signin-from:${address}`, limit: SIGNIN_LIMIT_PER_CLIENT_ADDRESS },
  ];
}

/** `ip` is the client address (src/http/client-address.ts). */
export async function signInWithPassword(options: { email: string; password: string; ip: string }): Promise<SignInResult> {
  const email = options.email.trim().toLowerCase();
  const client = await db();
  let retryAfterSeconds = 1;
  const [taken, user] = await Promise.all([
    reserve(signInSlots(email, options.ip), { waitForInFlight: true }).then(
      (reservation): Reservation | null => reservation,
      (error: unknown) => {
        if (!isRateLimited(error)) throw error;
        retryAfterSeconds = Number(error.headers["Retry-After"]) || 1;
        return null;
      },
    ),
    email ? client.user.findUnique({ where: { email } }) : null,
  ]);
  if (taken === null) {
    // When it is the address that is full, its next sign-ins are answered before Next (src/server/front.ts).
    const address = signInSlots(email, options.ip)[2]!;
    const until = await fullUntil(address);
    if (until !== null) rememberRefusedAddress(addressKey(options.ip), until);
    await recordEvent({ type: "rate_limited", userId: user?.id ?? null, ip: options.ip, detail: { limit: "signin" } });
    return { ok: false, reason: "rate_limited", retryAfterSeconds };
  }
  let ok: boolean;
  try {
    ok = await verifyPassword(user?.passwordHash ?? null, options.password);
  } catch (error) {
    await taken.release(); // not decided (the hashing pool is full): not counted
    throw error;
  }
  if (!user || !ok) {
    taken.keep(); // a failure: counted
    await recordEvent({ type: "signin.failed", userId: user?.id ?? null, ip: options.ip, detail: { reason: user ? "wrong password" : "unknown e-mail" } });
    return { ok: false, reason: "invalid" };
  }
  await write(async (tx) => {
    await taken.releaseInTx(tx);
    await recordEventInTx(tx, { type: "signin.succeeded", userId: user.id, ip: options.ip });
  }).finally(() => taken.releasedInTx());
  return { ok: true, user: { id: user.id, name: user.name, email: user.email, sessionVersion: user.sessionVersion } };
}
