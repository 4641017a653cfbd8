import type { User } from "@/generated/sqlite/client";

export type UserRepresentation = { id: number; resource_uri: string; name: string; email?: string };

export const userUri = (id: number) => `/api/user/${id}/`;

/** The user representation (CONTRACT.md 2): the e-mail only for the user themself. */
export function representUser(user: Pick<User, "id" | "name" | "email">, viewerId: number | null): UserRepresentation {
  const out: UserRepresentation = { id: user.id, resource_uri: userUri(user.id), name: user.name };
  if (viewerId === user.id) out.email = user.email;
  return out;
}
