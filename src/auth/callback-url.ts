// Return addresses after sign-in or sign-up (`callbackUrl`; docs/rules/accounts.md#return-addresses). The
// value is parsed against APP_URL the way a browser would resolve it, must have APP_URL's origin, and only its
// path and query are used; anything else goes to `/`. String checks on the raw value are not enough: browsers
// drop tabs and newlines and read `\` as `/`, so `/\t/evil.example` becomes the protocol-relative
// `//evil.example`.
import { env } from "@/env";

const MAX_LENGTH = 4096;
/** Control characters (which browsers strip or choke on) and backslashes (which they read as slashes). */
const FORBIDDEN = /[\u0000-\u001f\u007f\\]/;
/** A percent-encoded slash or backslash in the path: harmless here, but a second decoder could open it. */
const ENCODED_SLASH = /%(2f|5c)/i;

/** A post-sign-in destination on this site (path and query), or `/`. */
export function safeCallbackUrl(value: unknown): string {
  if (typeof value !== "string" || value.trim() === "" || value.length > MAX_LENGTH || FORBIDDEN.test(value)) return "/";
  const base = new URL(env().appUrl);
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return "/";
  }
  if (url.origin !== base.origin || url.username || url.password) return "/";
  // `/.//evil.example` resolves to the path `//evil.example`, which a browser would read as another host.
  if (url.pathname.startsWith("//") || ENCODED_SLASH.test(url.pathname)) return "/";
  return url.pathname + url.search;
}
