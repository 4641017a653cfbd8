// What the logout confirmation page shows (docs/rules/openid-connect.md#logout): the service's name, the
// application that asked (when known), and the form's sealed request and CSRF token.
import { SERVICE_NAME } from "@/site";
import type { SessionUser } from "@/auth/session";
import { db } from "@/db/client";
import { logoutCsrfToken, openLogoutRequest } from "@/logout/logout-request";

export type LogoutConfirmation = { serviceName: string; clientName: string | null; csrf: string };

/** The page's content for `sealed`, or null when it is not a live request of this person's session. */
export async function loadLogoutConfirmation(sealed: string, user: SessionUser): Promise<LogoutConfirmation | null> {
  const request = sealed ? openLogoutRequest(sealed, user) : null;
  if (!request) return null;
  const client = request.clientId ? await (await db()).client.findUnique({ where: { clientId: request.clientId }, select: { name: true } }) : null;
  return { serviceName: SERVICE_NAME, clientName: client?.name ?? null, csrf: logoutCsrfToken(sealed, user) };
}
