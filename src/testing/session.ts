// A real next-auth session cookie for a user, encoded with the app's secret exactly as next-auth does after
// a sign-in, for integration tests of the browser endpoints.
import { encode } from "next-auth/jwt";
import { nowMs } from "@/clock";
import { env } from "@/env";
import { randomSecret } from "@/secrets";
import { sessionCookieName } from "@/auth/session";

/**
 * `authTime`: when the person typed their password (seconds since the epoch; default now; null: not recorded).
 * `sid`: the session's id (default a fresh random one; null: not recorded).
 */
export async function sessionCookie(user: { id: number; name?: string; email?: string }, sessionVersion = 0, authTime: number | null = Math.floor(nowMs() / 1000), sid: string | null = randomSecret(16)): Promise<string> {
  const claims = { sub: String(user.id), uid: user.id, sv: sessionVersion, name: user.name, email: user.email, ...(authTime === null ? {} : { auth_time: authTime }), ...(sid === null ? {} : { sid }) };
  const token = await encode({ token: claims, secret: env().authSecret });
  return `${sessionCookieName()}=${token}`;
}
