// Reads the browser session from a cookie header, for route handlers (from the Request) and server
// components (from next/headers). The session is valid only while the user exists and its session version
// matches the user's (sign out everywhere bumps it).
import { decode } from "next-auth/jwt";
import { nowMs } from "@/clock";
import { env } from "@/env";
import { db } from "@/db/client";

/** `authTime`: when the person last typed their password (seconds since the epoch); null for sessions made
 * before it was recorded. `sid`: the session's random id (docs/rules/openid-connect.md#back-channel-logout); null
 * for sessions made before it was recorded. */
export type SessionUser = { id: number; name: string; email: string; authTime: number | null; sid: string | null };

export function sessionCookieName(): string {
  return env().appUrl.startsWith("https://") ? "__Secure-next-auth.session-token" : "next-auth.session-token";
}

function parseCookies(header: string): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    try {
      cookies.set(name, decodeURIComponent(part.slice(eq + 1).trim()));
    } catch {
      // ignore a malformed cookie
    }
  }
  return cookies;
}

/** The session token from a Cookie header (next-auth splits large ones into .0, .1, ... chunks). */
function sessionToken(cookieHeader: string): string | null {
  const name = sessionCookieName();
  const cookies = parseCookies(cookieHeader);
  if (cookies.has(name)) return cookies.get(name)!;
  const chunks = [...cookies.keys()]
    .filter((key) => key.startsWith(name + "."))
    .sort((a, b) => Number(a.slice(name.length + 1)) - Number(b.slice(name.length + 1)));
  return chunks.length ? chunks.map((key) => cookies.get(key)).join("") : null;
}

export async function sessionUserFromCookieHeader(cookieHeader: string | null): Promise<SessionUser | null> {
  if (!cookieHeader) return null;
  const token = sessionToken(cookieHeader);
  if (!token) return null;
  let payload;
  try {
    payload = await decode({ token, secret: env().authSecret });
  } catch {
    return null;
  }
  if (!payload || typeof payload.uid !== "number") return null;
  if (typeof payload.exp === "number" && payload.exp * 1000 <= nowMs()) return null;
  const user = await (await db()).user.findUnique({ where: { id: payload.uid } });
  if (!user || user.sessionVersion !== (payload.sv ?? 0)) return null;
  const authTime = typeof payload.auth_time === "number" ? payload.auth_time : null;
  const sid = typeof payload.sid === "string" ? payload.sid : null;
  return { id: user.id, name: user.name, email: user.email, authTime, sid };
}

export function sessionUserFromRequest(request: Request): Promise<SessionUser | null> {
  return sessionUserFromCookieHeader(request.headers.get("cookie"));
}

/** In a server component or server action. */
export async function currentUser(): Promise<SessionUser | null> {
  const { cookies } = await import("next/headers");
  const store = await cookies();
  const header = store
    .getAll()
    .map((cookie) => `${cookie.name}=${encodeURIComponent(cookie.value)}`)
    .join("; ");
  return sessionUserFromCookieHeader(header);
}
