// The claims that OpenID Connect's scopes release (OpenID Connect Core 5.4,
// docs/rules/openid-connect.md#scopes-and-claims): `sub` always (the user id as a string, the same for every
// client: subject_types_supported is ["public"]); `profile` adds `name`; `email` adds `email` and
// `email_verified` (whether the owner confirmed the address, docs/rules/accounts.md#sign-up-and-confirmation).
import type { User } from "@/generated/sqlite/client";
import type { Scope } from "@/oauth/scope";

export type UserClaims = { sub: string; name?: string; email?: string; email_verified?: boolean };

/** Every claim this server can release, for the discovery document's claims_supported. */
export const CLAIMS_SUPPORTED = ["sub", "iss", "aud", "exp", "iat", "auth_time", "amr", "nonce", "at_hash", "name", "email", "email_verified"];

export function userClaims(user: Pick<User, "id" | "name" | "email" | "emailVerifiedAt">, scopes: readonly Scope[]): UserClaims {
  const claims: UserClaims = { sub: String(user.id) };
  if (scopes.includes("profile")) claims.name = user.name;
  if (scopes.includes("email")) {
    claims.email = user.email;
    claims.email_verified = user.emailVerifiedAt !== null;
  }
  return claims;
}
