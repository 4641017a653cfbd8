// next-auth (v4) for the browser session: a credentials provider over our users, JWT sessions in an
// encrypted cookie. The token carries the user's id and session version; bumping the version ("sign out
// everywhere") ends every session at once (see src/auth/session.ts). It also carries `auth_time`, when the
// person last typed their password (OpenID Connect's auth_time, max_age and prompt=login,
// docs/rules/openid-connect.md#authorization-parameters), and `sid`, the session's random id, which id_tokens
// carry and whose end queues logout tokens (docs/rules/openid-connect.md#back-channel-logout). A sign-in that password hashing is too busy to check
// is refused as "busy", never as a wrong password (docs/rules/accounts.md#password-hashing; the route gives it
// 503, src/auth/sign-in-status.ts).
// The input rule (src/http/input-text.ts): an e-mail or password holding a control character is a failed
// sign-in at once, before any lookup (PostgreSQL text cannot hold U+0000).
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { nowMs } from "@/clock";
import { env } from "@/env";
import { clientAddressFromForwarded } from "@/http/client-address";
import { ServiceBusy } from "@/http/errors";
import { noteSignInRetryAfter, SIGN_IN_BUSY, SIGN_IN_RATE_LIMITED } from "@/auth/sign-in-status";
import { hasControlCharacter } from "@/http/input-text";
import { signInWithPassword } from "@/users/sign-in";
import { randomSecret } from "@/secrets";
import { write } from "@/db/client";
import { endBrowserSessionInTx } from "@/browser-sessions/session-clients";
import { logoutsQueued } from "@/browser-sessions/logout-queued";
import { log } from "@/observability/log";

/**
 * The client address of the sign-in request (docs/rules/endpoints.md#client-address), from the headers
 * next-auth hands to authorize().
 */
function signInAddress(headers: Record<string, unknown> | undefined): string {
  const forwarded = headers?.["x-forwarded-for"];
  const value = Array.isArray(forwarded) ? forwarded.join(", ") : typeof forwarded === "string" ? forwarded : null;
  return clientAddressFromForwarded(value, env().trustProxy);
}

export const SESSION_MAX_AGE_SECONDS = 7 * 24 * 3600;

export function authOptions(): NextAuthOptions {
  const config = env();
  return {
    secret: config.authSecret,
    useSecureCookies: config.appUrl.startsWith("https://"),
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
    pages: { signIn: "/login", error: "/login" },
    providers: [
      CredentialsProvider({
        name: "Email and password",
        credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
        async authorize(credentials, request) {
          if (hasControlCharacter(credentials?.email ?? "") || hasControlCharacter(credentials?.password ?? "")) return null;
          let result: Awaited<ReturnType<typeof signInWithPassword>>;
          try {
            result = await signInWithPassword({
              email: credentials?.email ?? "",
              password: credentials?.password ?? "",
              ip: signInAddress(request?.headers as Record<string, unknown> | undefined),
            });
          } catch (error) {
            // Password hashing refused the check (src/users/passwords.ts): not a wrong password, try again.
            if (error instanceof ServiceBusy) throw new Error(SIGN_IN_BUSY);
            throw error;
          }
          if (!result.ok) {
            if (result.reason === "rate_limited") {
              noteSignInRetryAfter(result.retryAfterSeconds);
              throw new Error(SIGN_IN_RATE_LIMITED);
            }
            return null;
          }
          const { user } = result;
          return { id: String(user.id), name: user.name, email: user.email, sv: user.sessionVersion };
        },
      }),
    ],
    events: {
      // Signing out of this browser ends the session for the clients it signed in to
      // (docs/rules/openid-connect.md#back-channel-logout): their logout tokens are queued, never awaited.
      async signOut({ token }) {
        const sid = typeof token?.sid === "string" ? token.sid : null;
        if (!sid) return;
        try {
          logoutsQueued(await write((tx) => endBrowserSessionInTx(tx, sid)));
        } catch (error) {
          log.warn("could not queue the logout tokens of a signed-out session", { error: String(error) });
        }
      },
    },
    callbacks: {
      jwt({ token, user }) {
        if (user) {
          token.uid = Number(user.id);
          token.sv = (user as { sv?: number }).sv ?? 0;
          token.auth_time = Math.floor(nowMs() / 1000);
          // The session's id, which id_tokens carry as `sid` (docs/rules/openid-connect.md#back-channel-logout).
          token.sid = randomSecret(16);
        }
        return token;
      },
      session({ session, token }) {
        if (session.user) (session.user as { id?: number }).id = token.uid as number;
        return session;
      },
    },
  };
}
