// A validated authorization request, sealed (HMAC-SHA256 with a key derived from AUTH_SECRET) while the user
// looks at the consent page, so that nothing in it can be altered between the redirect and the decision.
// It is bound to the signed-in user and lives ten minutes. The device flow (RFC 8628) seals its approval the
// same way, with responseType "device_code", so that both go through the one consent page.
// The time a plain authorization request was received crosses the sign-in page the same way (`auth_after`,
// docs/rules/tokens.md#front-channel): signed with this server's key and bound to the request's parameters, so
// that neither a client nor anyone who can edit the URL can make prompt=login accept a sign-in from before the
// request.
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { nowMs } from "@/clock";
import { env } from "@/env";
import type { Audience } from "@/oauth/resource";
import type { Scope } from "@/oauth/scope";

export type AuthorizationRequest = {
  clientId: string;
  userId: number;
  responseType: "code" | "token" | "device_code";
  /** Empty for the device flow, which redirects nowhere. */
  redirectUri: string;
  scopes: Scope[];
  state: string;
  codeChallenge: string | null;
  /** RFC 8707: the resource the request named (the audience of what it issues), or null for none. */
  audience?: Audience | null;
  /** OpenID Connect: the request's nonce, and when the user last typed their password (seconds). */
  nonce?: string | null;
  authTime?: number | null;
  /** The browser session's id (docs/rules/openid-connect.md#back-channel-logout), which the grant keeps. */
  sid?: string | null;
  /** The device flow: the DeviceAuthorization being approved, and its user code as the person typed it. */
  deviceAuthorizationId?: number;
  userCode?: string;
  expiresAt: number;
};

const LIFETIME_MS = 10 * 60 * 1000;

let cachedKey: { secret: string; key: Buffer } | null = null;
function key(purpose: string): Buffer {
  const secret = env().authSecret;
  if (!cachedKey || cachedKey.secret !== secret) {
    cachedKey = { secret, key: Buffer.from(hkdfSync("sha256", secret, "", "oauth-authorization-request", 32)) };
  }
  return createHmac("sha256", cachedKey.key).update(purpose).digest();
}

function mac(purpose: string, data: string): string {
  return createHmac("sha256", key(purpose)).update(data).digest("base64url");
}

function macMatches(expected: string, presented: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function sealRequest(request: Omit<AuthorizationRequest, "expiresAt">): string {
  const body = Buffer.from(JSON.stringify({ ...request, expiresAt: nowMs() + LIFETIME_MS })).toString("base64url");
  return `${body}.${mac("seal", body)}`;
}

/**
 * The request inside an intact seal, else null. Only this server can make a seal (the key derives from
 * AUTH_SECRET) and it seals nothing but JSON.stringify of a request, so an intact body always parses.
 */
function unsealed(sealed: string): AuthorizationRequest | null {
  const [body, signature, extra] = sealed.split(".");
  if (!body || !signature || extra !== undefined || !macMatches(mac("seal", body), signature)) return null;
  return JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as AuthorizationRequest;
}

/** The sealed request, if its seal is intact, it has not expired, and it belongs to `userId`. */
export function openRequest(sealed: string, userId: number): AuthorizationRequest | null {
  const request = unsealed(sealed);
  if (!request || request.userId !== userId || request.expiresAt <= nowMs()) return null;
  return request;
}

/**
 * The redirect URI of an intact, unexpired sealed request, whoever it belongs to (the page checks the user):
 * for the consent page's form-action (src/http/security-headers.ts). Null for anything else, and for a
 * device-flow approval, which redirects nowhere (its redirectUri is empty).
 */
export function sealedRedirectUri(sealed: string): string | null {
  const request = unsealed(sealed);
  return request && request.expiresAt > nowMs() && request.redirectUri ? request.redirectUri : null;
}

/** Parameters that are not part of what the received time is bound to: the optional implicit client_secret
 * (left out of the way back) and the signed time itself. */
const UNBOUND = new Set(["client_secret", "auth_after"]);

/** The request's parameters in one order, whatever order or encoding the URL used. */
function canonicalParameters(query: URLSearchParams): string {
  const pairs = [...query].filter(([name]) => !UNBOUND.has(name));
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return JSON.stringify(pairs);
}

/**
 * `auth_after` for the way back through the sign-in page: "<seconds>.<HMAC>", the time (seconds since the
 * epoch) this request was received, bound to the request's parameters.
 */
export function signReceivedAt(receivedAt: number, query: URLSearchParams): string {
  return `${receivedAt}.${mac("received-at", `${receivedAt}:${canonicalParameters(query)}`)}`;
}

/**
 * The time this request was received, from an `auth_after` that this server signed for exactly these
 * parameters less than ten minutes ago; null for anything else (absent, repeated, unsigned, signed for another
 * request, expired), which the caller treats as a request received now.
 */
export function verifiedReceivedAt(query: URLSearchParams): number | null {
  const values = query.getAll("auth_after");
  if (values.length !== 1) return null;
  const match = /^(\d{1,12})\.([\w-]{43})$/.exec(values[0]!);
  if (!match) return null;
  const receivedAt = Number(match[1]);
  if (!macMatches(mac("received-at", `${receivedAt}:${canonicalParameters(query)}`), match[2]!)) return null;
  const nowSeconds = nowMs() / 1000;
  // Signed by an instance whose clock runs a little ahead is fine; beyond a minute it is not ours to trust.
  if (receivedAt > nowSeconds + 60 || receivedAt * 1000 + LIFETIME_MS <= nowMs()) return null;
  return receivedAt;
}

/** The consent form's CSRF token: bound to the user and to the exact sealed request on the page. */
export function consentCsrfToken(userId: number, sealed: string): string {
  return mac("csrf", `${userId}:${sealed}`);
}

export function csrfTokenMatches(userId: number, sealed: string, presented: string): boolean {
  return macMatches(consentCsrfToken(userId, sealed), presented);
}
