import type { Client, User } from "@/generated/sqlite/client";
import { representUser } from "@/users/represent";

export type GrantType = "authorization_code" | "implicit" | "password";
export const GRANT_TYPES = ["authorization_code", "implicit", "password"] as const;

export function redirectUrisOf(client: Pick<Client, "redirectUris">): string[] {
  return JSON.parse(client.redirectUris) as string[];
}

/** Public clients: implicit ones always (CONTRACT.md 2), code clients registered as public (native apps). */
export function isPublicClient(client: Pick<Client, "grantType" | "isPublic">): boolean {
  return client.isPublic || client.grantType === "implicit";
}

export function representClient(client: Client & { owner: User }, viewerId: number | null) {
  return {
    client_id: client.clientId,
    name: client.name,
    owner: representUser(client.owner, viewerId),
    grant_type: client.grantType as GrantType,
    redirect_uris: redirectUrisOf(client),
    public: client.isPublic,
    first_party: client.firstParty,
    created_at: client.createdAt.toISOString(),
  };
}
