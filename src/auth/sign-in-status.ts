// The HTTP status of a refused web sign-in (docs/rules/accounts.md#limits,
// docs/rules/accounts.md#password-hashing). next-auth answers every credentials sign-in that authorize()
// refused or threw in the same way, 401 with the reason in the returned URL's `error` (`{"url":
// ".../api/auth/error?error=<reason>"}` for the sign-in page's fetch, a 302 there for a plain form post). A
// reason that is no wrong password gets its own status here, the body left as next-auth made it (the page
// reads the reason from it): password hashing busy is 503 with Retry-After: 1 (the caller may try again in a
// moment), a sign-in limit is 429 with Retry-After saying when the limit has room again (authorize() notes it
// for the request it serves: answerSignIn() gives each request its own note). Redirects stay redirects: a
// browser must follow them.
import { AsyncLocalStorage } from "node:async_hooks";
import { SIGN_IN_BUSY, SIGN_IN_RATE_LIMITED } from "@/auth/sign-in-reasons";

export { SIGN_IN_BUSY, SIGN_IN_RATE_LIMITED };

/** What authorize() learnt while serving this request: how long until the sign-in limit has room. */
const refusals = new AsyncLocalStorage<{ retryAfterSeconds: number | null }>();

/** Called by authorize() when a sign-in limit refused: the request's 429 says it in Retry-After. */
export function noteSignInRetryAfter(seconds: number): void {
  const note = refusals.getStore();
  if (note) note.retryAfterSeconds = seconds;
}

/** next-auth's answer (`handle`) to `request`, with the status its refusal reason calls for. */
export async function answerSignIn(request: Request, handle: () => Promise<Response>): Promise<Response> {
  const note = { retryAfterSeconds: null as number | null };
  const response = await refusals.run(note, handle);
  return withSignInStatus(request, response, note.retryAfterSeconds);
}

const CALLBACK = /\/api\/auth\/callback\/credentials\/?$/;

/** `response` (next-auth's) with the status its refusal reason calls for. */
export async function withSignInStatus(request: Request, response: Response, retryAfterSeconds: number | null = null): Promise<Response> {
  if (request.method !== "POST" || response.status !== 401 || !CALLBACK.test(new URL(request.url).pathname)) return response;
  if (!(response.headers.get("content-type") ?? "").includes("application/json")) return response;
  const text = await response.text();
  let reason: string | null = null;
  try {
    const url = (JSON.parse(text) as { url?: unknown }).url;
    if (typeof url === "string" && URL.canParse(url)) reason = new URL(url).searchParams.get("error");
  } catch {
    // not next-auth's JSON: left as it is
  }
  const headers = new Headers(response.headers);
  let status = response.status;
  if (reason === SIGN_IN_BUSY) {
    status = 503;
    headers.set("Retry-After", "1");
  } else if (reason === SIGN_IN_RATE_LIMITED) {
    status = 429;
    if (retryAfterSeconds !== null) headers.set("Retry-After", String(Math.max(1, Math.ceil(retryAfterSeconds))));
  }
  return new Response(text, { status, statusText: "", headers });
}
