// The few HTML answers that browser endpoints give without a page component: the authorization endpoint's
// error page (an unknown client or redirect URI must never redirect,
// docs/rules/tokens.md#authorization-errors), the consent decision's and the device form's. They look like the
// site's own pages (its header, fonts and colours, dark mode too: docs/rules/pages.md#error-pages) and tell
// developers the OAuth error code and the client_id. The style sheet is inline and allowed by its hash alone;
// there is no script.
// Under an https APP_URL they, and the redirects of the same endpoints, carry Strict-Transport-Security
// (RFC 6797; docs/rules/operations.md#security-headers) whoever serves them: the fast lane adds it too, but
// Next serves /consent/decide and /device/verify, and `npm run dev` everything, without the page proxy's
// headers.
import { createHash } from "node:crypto";
import { env } from "@/env";
import { hstsHeaders, isHttpsUrl } from "@/http/security-headers";
import { SERVICE_NAME } from "@/site";

const hsts = (): Record<string, string> => Object.fromEntries(hstsHeaders(isHttpsUrl(env().appUrl)));

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** A value shown to developers is someone's input: shortened, and escaped where it is written. */
const shorten = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

// The site's look: Tailwind 4's default font stacks and colours, as app/globals.css uses them (slate-50 and
// slate-900 in light mode, slate-950 and slate-100 in dark mode). e2e/pages-account.spec.ts compares the
// computed font and colours of this page with a page of the app, so that the two cannot drift apart.
const SANS = `-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue","Noto Sans",Arial,sans-serif,"Apple Color Emoji","Segoe UI Emoji","Segoe UI Symbol","Noto Color Emoji"`;
const MONO = `ui-monospace,SFMono-Regular,Menlo,Monaco,Consolas,"Liberation Mono","Courier New",monospace`;
const C = {
  slate50: "oklch(98.4% 0.003 247.858)",
  slate100: "oklch(96.8% 0.007 247.896)",
  slate200: "oklch(92.9% 0.013 255.508)",
  slate800: "oklch(27.9% 0.041 260.031)",
  slate900: "oklch(20.8% 0.042 265.755)",
  slate950: "oklch(12.9% 0.042 264.695)",
  blue400: "oklch(70.7% 0.165 254.624)",
  blue700: "oklch(48.8% 0.243 264.376)",
};
const STYLE = `*{box-sizing:border-box}
body{margin:0;min-height:100vh;background:${C.slate50};color:${C.slate900};font-family:${SANS};line-height:1.5;-webkit-font-smoothing:antialiased}
header{background:#fff;border-bottom:1px solid ${C.slate200}}
.bar{max-width:48rem;margin:0 auto;padding:0 1rem;min-height:3.5rem;display:flex;align-items:center}
.brand{display:flex;align-items:center;gap:.5rem;font-weight:600;font-size:.875rem;color:inherit;text-decoration:none}
main{max-width:28rem;margin:0 auto;padding:2rem 1rem}
h1{font-size:1.5rem;line-height:1.2;font-weight:600;letter-spacing:-.025em;margin:0 0 1.5rem}
@media (min-width:40rem){main{padding-top:3rem;padding-bottom:3rem}h1{font-size:1.875rem}}
.card{background:#fff;border:1px solid ${C.slate200};border-radius:.75rem;padding:1.25rem;box-shadow:0 1px 2px rgb(0 0 0/.05)}
.card p{margin:0}
.dev{margin-top:1.5rem;background:${C.slate100};border:1px solid ${C.slate200};border-radius:.5rem;padding:.75rem 1rem;font-size:.875rem}
.dev h2{font-size:.875rem;font-weight:600;margin:0 0 .25rem}
.dev dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem .75rem;margin:0}
.dev dd{margin:0;font-family:${MONO};overflow-wrap:anywhere}
a{color:${C.blue700};font-weight:500;text-underline-offset:2px}
.home{margin-top:1.5rem;font-size:.875rem}
@media (prefers-color-scheme:dark){body{background:${C.slate950};color:${C.slate100}}header,.card,.dev{background:${C.slate900};border-color:${C.slate800}}a{color:${C.blue400}}.brand{color:inherit}}`;

const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`;

const LOGO =
  '<svg viewBox="0 0 32 32" width="24" height="24" aria-hidden="true" focusable="false"><rect width="32" height="32" rx="7" fill="#1d4ed8"/><path d="M16 6.5 26 11.5 16 16.5 6 11.5Z" fill="#fff"/><path d="M8.2 15.1 16 19 23.8 15.1 26 16.2 16 21.2 6 16.2Z" fill="#bfdbfe"/><path d="M8.2 19.8 16 23.7 23.8 19.8 26 20.9 16 25.9 6 20.9Z" fill="#93c5fd"/></svg>';

/**
 * `facts` are for developers, shown under the message: the OAuth error code (as `["Error", code]`), the
 * client_id, and the like.
 */
export function htmlErrorPage(status: number, title: string, message: string, facts: [string, string][] = []): Response {
  const details = facts.length
    ? `<section class="dev" aria-labelledby="dev"><h2 id="dev">For developers</h2><dl>${facts
        .map(([label, value]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(shorten(value))}</dd>`)
        .join("")}</dl></section>`
    : "";
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="robots" content="noindex">
<title>${escapeHtml(title)} · ${escapeHtml(SERVICE_NAME)}</title>
<link rel="icon" href="/favicon.ico" sizes="32x32"><link rel="icon" href="/icon.svg" type="image/svg+xml"><link rel="apple-touch-icon" href="/apple-touch-icon.png">
<style>${STYLE}</style></head>
<body><header><div class="bar"><a class="brand" href="/">${LOGO}${escapeHtml(SERVICE_NAME)}</a></div></header>
<main id="main"><h1>${escapeHtml(title)}</h1><div class="card"><p>${escapeHtml(message)}</p></div>${details}<p class="home"><a href="/">Go to the home page</a></p></main></body></html>`;
  return new Response(body, {
    status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": `default-src 'none'; style-src ${STYLE_HASH}; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      "X-Frame-Options": "DENY",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      ...hsts(),
    },
  });
}

/**
 * The page for a failure that errorResponse() (src/http/route.ts) already logged and answered as JSON: the same
 * status, with its error code (server_error, temporarily_unavailable) and request id for developers.
 */
export async function htmlFailurePage(logged: Response, title: string, message: string): Promise<Response> {
  const body = (await logged.json().catch(() => ({}))) as { error?: unknown };
  const facts: [string, string][] = [["Error", typeof body.error === "string" ? body.error : "server_error"]];
  const requestId = logged.headers.get("X-Request-Id");
  if (requestId) facts.push(["Request id", requestId]);
  const page = htmlErrorPage(logged.status, title, message, facts);
  const retryAfter = logged.headers.get("Retry-After");
  if (retryAfter) page.headers.set("Retry-After", retryAfter);
  return page;
}

export function redirect(location: string, status: 302 | 303 = 302, headers: Record<string, string> = {}): Response {
  return new Response(null, {
    status,
    headers: { Location: location, "Cache-Control": "no-store", Pragma: "no-cache", "Referrer-Policy": "no-referrer", ...hsts(), ...headers },
  });
}
