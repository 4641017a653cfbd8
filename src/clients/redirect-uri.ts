// Redirect URIs (docs/rules/tokens.md#redirect-uris): absolute https URLs, or http on a loopback host only
// (RFC 8252 8.3); no fragment, no credentials. Matching is exact, except that the port of a loopback URI is
// not compared (RFC 8252 7.3). No control characters (the input rule, src/http/input-text.ts): the URL parser
// would drop or encode them, but the URI is stored and compared as it was typed.
import { hasControlCharacter } from "@/http/input-text";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Why `uri` cannot be registered, or null when it can. */
export function redirectUriProblem(uri: string): string | null {
  if (hasControlCharacter(uri)) return "must not contain control characters";
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use http or https (custom schemes cannot be registered)";
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) return "must use https (http only on localhost, 127.0.0.1 or [::1])";
  if (uri.includes("#")) return "must not contain a fragment";
  if (url.username || url.password) return "must not contain credentials";
  if (uri.length > 2000) return "must be at most 2000 characters";
  return null;
}

const LOOPBACK_PREFIX = /^(http:\/\/(?:localhost|127\.0\.0\.1|\[::1\]))(?::(\d{1,5}))?(?=[/?]|$)/;

/** A loopback http URI without its port (which must be 1 to 65535 when present), or null for any other URI. */
function loopbackWithoutPort(uri: string): string | null {
  const match = LOOPBACK_PREFIX.exec(uri);
  if (!match || (match[2] !== undefined && (Number(match[2]) < 1 || Number(match[2]) > 65535))) return null;
  return match[1] + uri.slice(match[0].length);
}

/** The registered URI that `presented` matches, or null. Comparison is on the exact strings. */
export function matchRedirectUri(registered: readonly string[], presented: string): string | null {
  if (registered.includes(presented)) return presented;
  const bare = loopbackWithoutPort(presented);
  if (bare === null || presented.includes("#")) return null;
  return registered.find((candidate) => loopbackWithoutPort(candidate) === bare) ? presented : null;
}
