// The logout request waiting on the confirmation page (docs/rules/openid-connect.md#logout): what the logout
// endpoint validated (the client, the registered address to go back to, the state), sealed with an HMAC under
// a key derived from AUTH_SECRET, bound to the signed-in person and their browser session, for ten minutes.
// The form's CSRF token is a second HMAC over the seal and the session, which only a page served to that
// session shows.
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { nowMs } from "@/clock";
import { env } from "@/env";

export type LogoutRequest = { clientId: string | null; redirectUri: string | null; state: string | null };
type Holder = { id: number; sid: string | null };

const LIFETIME_MS = 10 * 60 * 1000;
const ZSealed = z.object({
  clientId: z.string().nullable(),
  redirectUri: z.string().nullable(),
  state: z.string().nullable(),
  userId: z.number(),
  sid: z.string().nullable(),
  expiresAt: z.number(),
});

let cachedKey: { secret: string; key: Buffer } | null = null;
function mac(purpose: string, data: string): string {
  const secret = env().authSecret;
  if (!cachedKey || cachedKey.secret !== secret) cachedKey = { secret, key: Buffer.from(hkdfSync("sha256", secret, "", "oidc-logout-request", 32)) };
  return createHmac("sha256", cachedKey.key).update(`${purpose}\n${data}`).digest("base64url");
}

function matches(expected: string, presented: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function sealLogoutRequest(request: LogoutRequest, holder: Holder): string {
  const body = Buffer.from(JSON.stringify({ ...request, userId: holder.id, sid: holder.sid, expiresAt: nowMs() + LIFETIME_MS })).toString("base64url");
  return `${body}.${mac("seal", body)}`;
}

/** The sealed content when the seal is intact and unexpired, whoever it was made for; else null. */
function unsealed(sealed: string): z.infer<typeof ZSealed> | null {
  const [body, tag, extra] = sealed.split(".");
  if (!body || !tag || extra !== undefined || !matches(mac("seal", body), tag)) return null;
  const parsed = ZSealed.safeParse(JSON.parse(Buffer.from(body, "base64url").toString("utf8")));
  return parsed.success && parsed.data.expiresAt > nowMs() ? parsed.data : null;
}

/** The request inside an intact, unexpired seal made for this person's session; else null. */
export function openLogoutRequest(sealed: string, holder: Holder): LogoutRequest | null {
  const content = unsealed(sealed);
  if (!content || content.userId !== holder.id || content.sid !== holder.sid) return null;
  const { userId: _userId, sid: _sid, expiresAt: _expiresAt, ...request } = content;
  return request;
}

/**
 * The registered address an intact seal sends the browser to after the form (the confirmation page's CSP
 * names its origin in form-action, as the consent page does: docs/rules/operations.md#security-headers).
 */
export function sealedLogoutRedirectUri(sealed: string): string | null {
  return unsealed(sealed)?.redirectUri ?? null;
}

/** The confirmation form's CSRF token: bound to the seal on the page and to the session. */
export function logoutCsrfToken(sealed: string, holder: Holder): string {
  return mac("csrf", `${holder.id}:${holder.sid ?? ""}:${sealed}`);
}

export function logoutCsrfTokenMatches(sealed: string, holder: Holder, presented: string): boolean {
  return matches(logoutCsrfToken(sealed, holder), presented);
}
