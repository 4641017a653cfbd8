// The user representation (docs/rules/permission-requests.md#users): `{"id", "resource_uri", "name"}`, plus
// `"email"` where the e-mail visibility rule allows it
// (docs/rules/permission-requests.md#who-sees-an-e-mail-address, src/users/email-visibility.ts): to the user
// themself, and in a permission request to its target.
import type { User } from "@/generated/sqlite/client";
import { maySeeEmail, type EmailContext } from "@/users/email-visibility";

export type UserRepresentation = { id: number; resource_uri: string; name: string; email?: string };

export const userUri = (id: number) => `/api/user/${id}/`;

export function representUser(user: Pick<User, "id" | "name" | "email">, viewerId: number | null, context?: EmailContext): UserRepresentation {
  const out: UserRepresentation = { id: user.id, resource_uri: userUri(user.id), name: user.name };
  if (maySeeEmail(viewerId, user.id, context)) out.email = user.email;
  return out;
}
