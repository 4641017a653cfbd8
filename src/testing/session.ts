// A real next-auth session cookie for a user, encoded with the app's secret exactly as next-auth does after
// a sign-in, for integration tests of the browser endpoints.
import { encode } from "next-auth/jwt";
import { env } from "@/env";
import { sessionCookieName } from "@/auth/session";

export async function sessionCookie(user: { id: number; name?: string; email?: string }, sessionVersion = 0): Promise<string> {
  const token = await encode({ token: { sub: String(user.id), uid: user.id, sv: sessionVersion, name: user.name, email: user.email }, secret: env().authSecret });
  return `${sessionCookieName()}=${token}`;
}
