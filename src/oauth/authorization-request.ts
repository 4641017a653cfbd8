// A validated authorization request, sealed (HMAC-SHA256 with a key derived from AUTH_SECRET) while the user
// looks at the consent page, so that nothing in it can be altered between the redirect and the decision.
// It is bound to the signed-in user and lives ten minutes. The device flow (RFC 8628) seals its approval the
// same way, with responseType "device_code", so that both go through the one consent page.
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { nowMs } from "@/clock";
import { env } from "@/env";
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
  /** OpenID Connect: the request's nonce, and when the user last typed their password (seconds). */
  nonce?: string | null;
  authTime?: number | null;
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

/** The consent form's CSRF token: bound to the user and to the exact sealed request on the page. */
export function consentCsrfToken(userId: number, sealed: string): string {
  return mac("csrf", `${userId}:${sealed}`);
}

export function csrfTokenMatches(userId: number, sealed: string, presented: string): boolean {
  return macMatches(consentCsrfToken(userId, sealed), presented);
}
