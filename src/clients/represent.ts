import type { Client, User } from "@/generated/sqlite/client";
import { representUser } from "@/users/represent";

/** The client grant types: SPEC.md 5.1's three, and client_credentials and device_code (CONTRACT.md 10). */
export const GRANT_TYPES = ["authorization_code", "implicit", "password", "client_credentials", "device_code"] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
/** Grant types that redirect the browser to the client, and so need registered redirect URIs. */
export const REDIRECTING_GRANT_TYPES: readonly GrantType[] = ["authorization_code", "implicit"];

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
