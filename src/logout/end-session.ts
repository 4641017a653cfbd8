// The end_session_endpoint, GET and POST /api/connect/oauth2/logout/ (OpenID Connect RP-Initiated Logout 1.0
// sections 2, 3 and 4; docs/rules/openid-connect.md#logout), and the confirmation form's POST to
// /api/connect/oauth2/logout/confirm/. A browser endpoint: its errors are an HTML page, never a redirect.
//
// Parameters (the query of a GET, the form of a POST; each at most once): id_token_hint (an id_token this
// server signed, expired or not, src/logout/id-token-hint.ts), client_id (when both are given, one of the
// hint's audiences), post_logout_redirect_uri (exactly one of the client's registered ones; needs the client
// from client_id or the hint) and state (returned with that redirect). ui_locales and logout_hint are
// accepted and ignored.
//
// A signed-in person whom the hint names is signed out at once; anyone else signed in is asked first, on
// /logout ("Sign out of <service>?"), whose form comes back here with a CSRF token. Signing out ends the
// browser session (its logout tokens are queued in the same transaction, src/browser-sessions/) and clears
// the session cookie. Then the browser goes to the registered address, with state, or to /logout/done.
import { env } from "@/env";
import { SERVICE_NAME } from "@/site";
import { sessionCookieName, sessionUserFromRequest, type SessionUser } from "@/auth/session";
import { readBody } from "@/http/body";
import { htmlErrorPage, redirect } from "@/http/html";
import { hasControlCharacter } from "@/http/input-text";
import { db, write } from "@/db/client";
import { log } from "@/observability/log";
import { postLogoutRedirectUrisOf } from "@/clients/logout-uris";
import { endBrowserSessionInTx } from "@/browser-sessions/session-clients";
import { deliverLogoutsSoon } from "@/logout/deliver-soon";
import { verifyIdTokenHint } from "@/logout/id-token-hint";
import { logoutCsrfTokenMatches, openLogoutRequest, sealLogoutRequest, type LogoutRequest } from "@/logout/logout-request";

const PARAMETERS = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "ui_locales", "logout_hint"] as const;
export const SIGNED_OUT_PAGE = "/logout/done";

function invalidLogoutPage(message: string, code = "invalid_request", facts: [string, string][] = []): Response {
  return htmlErrorPage(400, "Sign-out request not valid", `${message} You cannot be sent back to the application.`, [["Error", code], ...facts]);
}

/** The request's parameters (GET query or POST form), or null when one is repeated or not text. */
async function parameters(request: Request): Promise<Map<string, string> | null> {
  let entries: [string, string][];
  if (request.method === "POST") {
    const body = await readBody(request, { form: true, allowEmpty: true, invalidMessage: "invalid_request" }).catch(() => null);
    if (body === null) return null;
    entries = Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === "string");
  } else {
    entries = [...new URL(request.url).searchParams];
  }
  const values = new Map<string, string>();
  for (const [name, value] of entries) {
    if (!(PARAMETERS as readonly string[]).includes(name)) continue;
    if (values.has(name) || hasControlCharacter(value)) return null;
    if (value !== "") values.set(name, value);
  }
  return values;
}

/** Where the browser goes once the request is done: the registered address with state, or the signed-out page. */
function destination(logout: LogoutRequest): string {
  if (!logout.redirectUri) return SIGNED_OUT_PAGE;
  const url = new URL(logout.redirectUri);
  if (logout.state !== null) url.searchParams.append("state", logout.state);
  return url.toString();
}

/** Set-Cookie lines that remove the session cookie (and the chunks next-auth splits a large one into). */
function clearedSessionCookies(request: Request): string[] {
  const name = sessionCookieName();
  const present = (request.headers.get("cookie") ?? "")
    .split(";")
    .map((part) => part.split("=")[0]!.trim())
    .filter((cookie) => cookie === name || cookie.startsWith(`${name}.`));
  const secure = env().appUrl.startsWith("https://") ? "; Secure" : "";
  return [...new Set([name, ...present])].map((cookie) => `${cookie}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; SameSite=Lax${secure}`);
}

/** Ends the browser session of `user`: queues its logout tokens, clears its cookie, and sends the browser on. */
async function signOut(request: Request, user: SessionUser, logout: LogoutRequest, status: 302 | 303): Promise<Response> {
  const sid = user.sid;
  const queued = sid ? await write((tx) => endBrowserSessionInTx(tx, sid)) : [];
  deliverLogoutsSoon(queued);
  log.info("signed out at the logout endpoint", { client: logout.clientId, logoutTokens: queued.length });
  const response = redirect(destination(logout), status);
  for (const cookie of clearedSessionCookies(request)) response.headers.append("Set-Cookie", cookie);
  return response;
}

/** GET or POST /api/connect/oauth2/logout/. */
export async function handleEndSession(request: Request): Promise<Response> {
  const params = await parameters(request);
  if (!params) return invalidLogoutPage("The sign-out request repeats a parameter or holds a control character.");
  const hintText = params.get("id_token_hint");
  const hint = hintText === undefined ? null : await verifyIdTokenHint(hintText);
  if (hintText !== undefined && !hint) return invalidLogoutPage("The sign-out request's id_token_hint is not an id_token this service issued.");
  let clientId = params.get("client_id") ?? null;
  if (hint) {
    if (clientId !== null && !hint.audiences.includes(clientId)) return invalidLogoutPage("The sign-out request's client_id is not the audience of its id_token_hint.");
    if (clientId === null && hint.audiences.length === 1) clientId = hint.audiences[0]!;
  }
  const client = clientId === null ? null : await (await db()).client.findUnique({ where: { clientId } });
  if (clientId !== null && !client) return invalidLogoutPage("The application of this sign-out request is not registered.", "invalid_client", [["client_id", clientId]]);
  const presented = params.get("post_logout_redirect_uri") ?? null;
  if (presented !== null) {
    if (!client) return invalidLogoutPage("The sign-out request has a post_logout_redirect_uri but names no application (client_id or id_token_hint).");
    if (!postLogoutRedirectUrisOf(client).includes(presented)) {
      return invalidLogoutPage("The sign-out request's post_logout_redirect_uri is not registered for the application.", "invalid_request", [["client_id", client.clientId]]);
    }
  }
  const logout: LogoutRequest = { clientId: client?.clientId ?? null, redirectUri: presented, state: presented !== null ? (params.get("state") ?? null) : null };
  const status = request.method === "POST" ? 303 : 302;
  const user = await sessionUserFromRequest(request);
  if (!user) return redirect(destination(logout), status);
  if (hint && hint.sub === String(user.id)) return signOut(request, user, logout, status);
  return redirect(`/logout?request=${encodeURIComponent(sealLogoutRequest(logout, user))}`, status);
}

/** POST /api/connect/oauth2/logout/confirm/: the confirmation page's answer. */
export async function handleLogoutConfirmation(request: Request): Promise<Response> {
  if (request.headers.get("origin") !== new URL(env().appUrl).origin) {
    return htmlErrorPage(403, "Request refused", `This form can only be sent from ${SERVICE_NAME}'s own sign-out page.`, [["Error", "invalid_request"]]);
  }
  const user = await sessionUserFromRequest(request);
  if (!user) return redirect(SIGNED_OUT_PAGE, 303); // signed out meanwhile: nothing left to do
  const form = await readBody(request, { form: true, invalidMessage: "invalid_request" }).catch(() => ({}) as Record<string, unknown>);
  const sealed = typeof form.request === "string" ? form.request : "";
  const csrf = typeof form.csrf === "string" ? form.csrf : "";
  if (!logoutCsrfTokenMatches(sealed, user, csrf)) {
    return htmlErrorPage(403, "Request refused", "The sign-out form was not valid for your session. Go back to the application and start again.", [["Error", "invalid_request"]]);
  }
  const logout = openLogoutRequest(sealed, user);
  if (!logout) return htmlErrorPage(400, "Request expired", "This sign-out request has expired. Go back to the application and start again.", [["Error", "invalid_request"]]);
  if (form.decision !== "sign_out") {
    log.info("sign-out declined on the confirmation page", { client: logout.clientId });
    return redirect("/", 303);
  }
  return signOut(request, user, logout, 303);
}
