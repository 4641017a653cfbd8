// Scopes (docs/rules/tokens.md#scopes): `readonly` and `readwrite`, where readwrite includes everything
// readonly allows; and OpenID Connect's `openid`, `profile` and `email`
// (docs/rules/openid-connect.md#scopes-and-claims), which grant no /api resource by themselves. Requests
// separate scopes with spaces (RFC 6749 3.3); commas are accepted too.
import { OAuthError } from "@/oauth/errors";

/** The API's own scopes. */
export const API_SCOPES = ["readonly", "readwrite"] as const;
/** OpenID Connect Core 5.4: who you are (`openid`, the `sub` claim), your name, your e-mail address. */
export const OIDC_SCOPES = ["openid", "profile", "email"] as const;
/** Every scope, in the canonical order in which stored and answered scope strings list them. */
export const SCOPES = [...API_SCOPES, ...OIDC_SCOPES] as const;
export type Scope = (typeof SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  readonly: "Read your profile, your bundles, who may read them, and your permission requests",
  readwrite: "Also create bundles and permission requests, accept or decline requests, and revoke access",
  openid: "Sign you in with your account here (it learns your account number)",
  profile: "See your name",
  email: "See your e-mail address and whether you confirmed it",
};

const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** Parses a requested scope string. Empty -> null; an unknown value -> invalid_scope. */
export function parseScope(raw: string | undefined | null): Scope[] | null {
  const parts = (raw ?? "").split(/[\s,]+/).filter(Boolean);
  if (parts.length === 0) return null;
  const scopes = new Set<Scope>();
  for (const part of parts) {
    if (!isScope(part)) throw new OAuthError("invalid_scope", {}, `unknown scope ${part}`);
    scopes.add(part);
  }
  return SCOPES.filter((scope) => scopes.has(scope));
}

/** Scopes as stored: one space-separated string in canonical order. */
export function formatScope(scopes: readonly Scope[]): string {
  return SCOPES.filter((scope) => scopes.includes(scope)).join(" ");
}

/** Reads a stored scope string (already validated when it was written). */
export function storedScopes(stored: string): Scope[] {
  const parts = stored.split(" ");
  return SCOPES.filter((scope) => parts.includes(scope));
}

/** Whether `granted` allows what `required` names; readwrite covers readonly. */
export function allows(granted: readonly Scope[], required: Scope): boolean {
  return granted.includes(required) || (required === "readonly" && granted.includes("readwrite"));
}

/**
 * docs/rules/tokens.md#scopes-of-registered-clients: a client registered with a `scope` (RFC 7591 2) asks
 * for those scopes only, wherever it asks (authorization, PAR, device authorization, token requests);
 * one registered without may ask for any. Throws invalid_scope.
 */
export function assertWithinRegisteredScope(requested: readonly Scope[], registered: string | null): void {
  if (registered !== null && !isSubset(requested, storedScopes(registered))) throw new OAuthError("invalid_scope", {}, "beyond the client's registered scope");
}

/** Whether every scope in `requested` is covered by `granted` (a narrowing, never a widening). */
export function isSubset(requested: readonly Scope[], granted: readonly Scope[]): boolean {
  return requested.every((scope) => allows(granted, scope));
}
