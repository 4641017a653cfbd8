// The /device form's post, POST /device/verify (RFC 8628 3.3, docs/rules/pages.md#device-page): a signed-in
// person typed the user code shown on their device. A pending, unexpired code leads to the consent page
// (docs/rules/tokens.md#consent) with the approval sealed like an authorization request (bound to the person,
// ten minutes); anything else is a wrong code, and wrong codes are limited per person (10 in 15 minutes, then
// a 429 page), which keeps the 34-bit user codes out of reach of guessing (RFC 8628 5.1). Each guess takes its
// slot before the code is looked up, in one atomic step (src/limits/limiter.ts), and gives it back when the
// code was right, so that a burst of guesses sent at once gets at most 10 looked up. The form is protected
// like the consent form: our own Origin and a CSRF token bound to the person.
import { now } from "@/clock";
import { env } from "@/env";
import { recordEvent } from "@/audit/record-event";
import { sessionUserFromRequest } from "@/auth/session";
import { readBody } from "@/http/body";
import { clientAddress } from "@/http/client-address";
import { htmlErrorPage, redirect } from "@/http/html";
import { db } from "@/db/client";
import { consentCsrfToken, csrfTokenMatches, sealRequest } from "@/oauth/authorization-request";
import { isRateLimited, reserve, type Limit, type Reservation } from "@/limits/limiter";
import { storedScopes } from "@/oauth/scope";
import { formatUserCode, normalizeUserCode } from "@/device/user-code";

/** Wrong codes per person. */
export const DEVICE_CODE_GUESS_LIMIT: Limit = { max: 10, windowMs: 15 * 60 * 1000 };

/** What the CSRF token of the /device form is bound to, besides the person. */
const FORM = "device-verification";

export const deviceFormCsrfToken = (userId: number) => consentCsrfToken(userId, FORM);

const devicePage = (userCode: string) => (userCode ? `/device?user_code=${encodeURIComponent(userCode)}` : "/device");

export async function handleDeviceVerification(request: Request): Promise<Response> {
  if (request.headers.get("origin") !== new URL(env().appUrl).origin) {
    return htmlErrorPage(403, "Request refused", "This form can only be sent from this site's own device page.", [["Error", "invalid_request"]]);
  }
  const form = await readBody(request, { form: true, invalidMessage: "invalid_request" }).catch(() => ({}) as Record<string, unknown>);
  const typed = typeof form.user_code === "string" ? form.user_code.trim().slice(0, 32) : "";
  const user = await sessionUserFromRequest(request);
  if (!user) return redirect(`/login?callbackUrl=${encodeURIComponent(devicePage(typed))}`, 303);
  if (!csrfTokenMatches(user.id, FORM, typeof form.csrf === "string" ? form.csrf : "")) {
    return htmlErrorPage(403, "Request refused", "The form was not valid for your session. Open the device page again.", [["Error", "invalid_request"]]);
  }
  // A session from before sign-ins recorded their time: sign in again, so that an id_token can say when.
  if (user.authTime === null) {
    return redirect(`/login?callbackUrl=${encodeURIComponent(devicePage(typed))}&prompt=login`, 303);
  }

  let taken: Reservation;
  try {
    taken = await reserve([{ key: `device:${user.id}`, limit: DEVICE_CODE_GUESS_LIMIT }]);
  } catch (error) {
    if (!isRateLimited(error)) throw error;
    await recordEvent({ type: "rate_limited", userId: user.id, ip: clientAddress(request), detail: { limit: "device user code" } });
    const page = htmlErrorPage(429, "Too many wrong codes", "You typed too many wrong codes. Wait a few minutes, then type the code from your device again.", [["Error", "rate_limited"]]);
    page.headers.set("Retry-After", error.headers["Retry-After"] ?? "900");
    return page;
  }

  const code = normalizeUserCode(typed);
  let row;
  try {
    row = code ? await (await db()).deviceAuthorization.findUnique({ where: { userCode: code }, include: { client: true } }) : null;
  } catch (error) {
    await taken.release(); // not decided: not counted
    throw error;
  }
  if (!code || !row || row.status !== "pending" || row.expiresAt <= now()) {
    return redirect(`${devicePage(typed)}${typed ? "&" : "?"}error=invalid`, 303);
  }
  await taken.release(); // a right code is not a guess the limit counts
  const sealed = sealRequest({
    clientId: row.client.clientId,
    userId: user.id,
    responseType: "device_code",
    redirectUri: "",
    scopes: storedScopes(row.scopes),
    state: "",
    codeChallenge: null,
    nonce: null,
    authTime: user.authTime,
    deviceAuthorizationId: row.id,
    userCode: formatUserCode(code),
  });
  return redirect(`/consent?request=${encodeURIComponent(sealed)}`, 303);
}
