// Request targets (docs/rules/endpoints.md#request-targets), checked on every request before any routing:
// before the fast lane decides anything and before Next sees the request, in every process (WORKERS too).
//
// - Dot segments. RFC 3986 5.2.4 leaves removing "." and ".." segments to whoever resolves a reference, and
//   the WHATWG URL parser that Next uses does remove them: `/api/auth/../user/1` reached /api/user/1 through
//   Next (next-auth's /api/auth/ is Next's), so skipping the fast lane and its body-size check made before
//   anything is read; `/.well-known/../api/user/1` likewise. Browsers and HTTP clients resolve dot segments
//   before they send a request, so a target that still holds one was made by hand: it is refused with a 400
//   JSON error on every path (pages included, so that nothing reaches /api through them), its body unread and
//   its connection closed. A segment is a dot segment in any spelling: ".", "..", "%2e", ".%2E", "%2e%2e"...
// - Percent-encoded unreserved characters ("%61pi" for "api", "%2e" for ".") are decoded first: RFC 3986
//   6.2.2.2 makes the two spellings the same path, so both get the same lane and the same rules.
// - A backslash, which the WHATWG URL parser reads as "/" (and Next redirects to the "/" spelling), and a "#"
//   (a request target has no fragment, RFC 9112 3.2): 400.
// - Absolute form (RFC 9112 3.2.2, `GET http://host/path HTTP/1.1`): the target's authority replaces Host.
//   It is served only when that authority is APP_URL's (Next would otherwise build its redirects on whatever
//   host the request named); the target then goes on in origin form, Host set to that authority. Userinfo
//   (RFC 9110 4.2.4) or another scheme than http(s): 400. Any other form (`*`, authority form): 400.
import type { IncomingMessage, ServerResponse } from "node:http";
import { JSON_TYPE } from "@/http/respond";

export type TargetRefusal = { status: 400; error: string };

const ABSOLUTE = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/is;
const UNRESERVED_ESCAPE = /%(2[dDeE]|3[0-9]|4[1-9a-fA-F]|5[0-9aA]|5[fF]|6[1-9a-fA-F]|7[0-9aA]|7[eE])/g;

/** The path with percent-encoded unreserved characters (ALPHA, DIGIT, "-", ".", "_", "~") decoded. */
export function decodeUnreserved(path: string): string {
  return path.includes("%") ? path.replace(UNRESERVED_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : path;
}

// (Every segment follows a "/": a path without "/." has none, and most paths are checked by that alone.)
const hasDotSegment = (path: string) => path.includes("/.") && path.split("/").some((segment) => segment === "." || segment === "..");

/**
 * Checks a request's target; rewrites req.url (and Host, for the absolute form) to the form the rest of the
 * server routes on. Returns the refusal to answer, or null when the request may go on.
 */
export function screenTarget(req: IncomingMessage, appHost: string): TargetRefusal | null {
  let target = req.url ?? "";
  const absolute = target.startsWith("/") ? null : ABSOLUTE.exec(target);
  if (absolute) {
    const [, scheme, authority, rest] = absolute as unknown as [string, string, string, string];
    if (!/^https?$/i.test(scheme) || authority.includes("@") || !URL.canParse(`${scheme}://${authority}/`)) {
      return { status: 400, error: "malformed request target" };
    }
    if (new URL(`${scheme}://${authority}/`).host !== appHost) return { status: 400, error: "request target names another host" };
    target = rest.startsWith("/") ? rest : `/${rest}`;
    req.headers.host = authority;
  } else if (!target.startsWith("/")) {
    return { status: 400, error: "malformed request target" };
  }
  const query = target.indexOf("?");
  const rawPath = query < 0 ? target : target.slice(0, query);
  if (rawPath.includes("\\") || rawPath.includes("#")) return { status: 400, error: "malformed path" };
  const path = decodeUnreserved(rawPath);
  if (hasDotSegment(path)) return { status: 400, error: "malformed path: dot segments are not allowed" };
  if (path !== rawPath || absolute) req.url = query < 0 ? path : path + target.slice(query);
  return null;
}

/**
 * Answers a refused target: the JSON error, the security headers every answer has (`extraHeaders`), and
 * `Connection: close`: the body, whatever its announced size, is not read, so the connection cannot carry
 * another request.
 */
export function refuseTarget(res: ServerResponse, refusal: TargetRefusal, extraHeaders: ReadonlyArray<readonly [string, string]>): void {
  const body = JSON.stringify({ error: refusal.error });
  const lines = ["Content-Type", JSON_TYPE, "Content-Length", String(Buffer.byteLength(body)), "Cache-Control", "no-store"];
  for (const [name, value] of extraHeaders) lines.push(name, value);
  lines.push("Connection", "close");
  res.writeHead(refusal.status, lines);
  res.end(body);
}
