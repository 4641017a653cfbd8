// The security headers of every HTML page (docs/rules/operations.md#security-headers), set by proxy.ts for
// each page request: a Content-Security-Policy with a fresh nonce in script-src (Next.js reads the nonce from
// the request's policy header and puts it on its own scripts; 'strict-dynamic' lets those load the rest), no
// 'unsafe-inline' for scripts, frame-ancestors 'none' (framing: RFC 6749 10.13, RFC 9700 4.7.1), base-uri
// 'none', object-src 'none', form-action 'self' plus the origin a form's answer redirects to (Chromium applies
// form-action to the redirects after a form post: the consent form's 303 goes to the client's redirect URI, so
// the consent page names that origin), X-Content-Type-Options, Referrer-Policy, Permissions-Policy, and
// Strict-Transport-Security when APP_URL is https (which every other answer also carries then:
// src/server/front.ts, src/http/html.ts).
// Styles keep 'unsafe-inline' (style attributes; they cannot run code). Development adds 'unsafe-eval' to
// script-src, which React's development build needs; production never has it.
import { randomBytes } from "node:crypto";

export type PagePolicyOptions = {
  nonce: string;
  /** Origins a form on this page may be redirected to after posting, besides the page's own. */
  formTargets?: string[];
  https: boolean;
  development: boolean;
  /**
   * The consent page shows a verified client's own logo, which must be https
   * (docs/rules/tokens.md#dynamic-registration).
   */
  httpsImages?: boolean;
};

/** 128 random bits, base64: a nonce-source. */
export function newNonce(): string {
  return randomBytes(16).toString("base64");
}

/** An origin that may stand in a CSP source list (scheme, host, port; nothing a policy could be broken by). */
export function cspOrigin(uri: string): string | null {
  if (!URL.canParse(uri)) return null;
  const url = new URL(uri);
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  return /^[a-z0-9.:[\]-]+$/i.test(url.host) ? url.origin : null;
}

export function contentSecurityPolicy({ nonce, formTargets = [], https, development, httpsImages = false }: PagePolicyOptions): string {
  const targets = [...new Set(formTargets.map(cspOrigin).filter((origin): origin is string => origin !== null))];
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data:${httpsImages ? " https:" : ""}`,
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    ["form-action 'self'", ...targets].join(" "),
    "frame-ancestors 'none'",
    ...(https ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}

/** Strict-Transport-Security (RFC 6797), for one year: on every answer when APP_URL is https, none otherwise. */
export const HSTS: readonly [string, string] = ["Strict-Transport-Security", "max-age=31536000"];

export function hstsHeaders(https: boolean): ReadonlyArray<readonly [string, string]> {
  return https ? [HSTS] : [];
}

/** Whether an APP_URL is https (the service is then reached over TLS only, and says so with HSTS). */
export const isHttpsUrl = (appUrl: string) => appUrl.startsWith("https://");

/** The other headers of every page (and, but for the policy, of every /api answer). */
export function pageSecurityHeaders(https: boolean): Array<[string, string]> {
  return [
    ["X-Content-Type-Options", "nosniff"],
    ["Referrer-Policy", "same-origin"],
    ["X-Frame-Options", "DENY"],
    ["Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=(), browsing-topics=()"],
    ...(https ? [[...HSTS] as [string, string]] : []),
  ];
}
