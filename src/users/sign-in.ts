// Password sign-in for the service's own pages (next-auth's credentials provider calls this). Failed
// attempts are limited per e-mail like the password grant (CONTRACT.md 4): after 10 in 15 minutes, 429-like
// refusal until the window passes, even for the right password.
import { ApiError } from "@/http/errors";
import { db } from "@/server/db";
import { assertNotLimited, recordFailure } from "@/oauth/rate-limit";
import { verifyPassword } from "@/users/passwords";

export type SignInResult = { ok: true; user: { id: number; name: string; email: string; sessionVersion: number } } | { ok: false; reason: "invalid" | "rate_limited" };

export async function signInWithPassword(options: { email: string; password: string }): Promise<SignInResult> {
  const email = options.email.trim().toLowerCase();
  const key = `signin:${email}`;
  try {
    await assertNotLimited(key);
  } catch (error) {
    if (error instanceof ApiError && error.status === 429) return { ok: false, reason: "rate_limited" };
    throw error;
  }
  const user = email ? await (await db()).user.findUnique({ where: { email } }) : null;
  const ok = await verifyPassword(user?.passwordHash ?? null, options.password);
  if (!user || !ok) {
    await recordFailure(key);
    return { ok: false, reason: "invalid" };
  }
  return { ok: true, user: { id: user.id, name: user.name, email: user.email, sessionVersion: user.sessionVersion } };
}
