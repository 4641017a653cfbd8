import type { Client, User } from "@/generated/sqlite/client";
import { representUser } from "@/users/represent";
import { postLogoutRedirectUrisOf } from "@/clients/logout-uris";

/**
 * The client grant types (docs/rules/tokens.md#clients): the three of the specification, and
 * client_credentials and device_code.
 */
export const GRANT_TYPES = ["authorization_code", "implicit", "password", "client_credentials", "device_code"] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
/** Grant types that redirect the browser to the client, and so need registered redirect URIs. */
export const REDIRECTING_GRANT_TYPES: readonly GrantType[] = ["authorization_code", "implicit"];

export function redirectUrisOf(client: Pick<Client, "redirectUris">): string[] {
  return JSON.parse(client.redirectUris) as string[];
}

/**
 * Public clients: implicit ones always (docs/rules/tokens.md#clients), code clients registered as public
 * (native apps).
 */
export function isPublicClient(client: Pick<Client, "grantType" | "isPublic">): boolean {
  return client.isPublic || client.grantType === "implicit";
}

/**
 * A client that registered itself (RFC 7591) has no owner (docs/rules/tokens.md#dynamic-registration): `owner`
 * is then null.
 */
export function representClient(client: Client & { owner: User | null }, viewerId: number | null) {
  return {
    client_id: client.clientId,
    name: client.name,
    owner: client.owner ? representUser(client.owner, viewerId) : null,
    grant_type: client.grantType as GrantType,
    redirect_uris: redirectUrisOf(client),
    post_logout_redirect_uris: postLogoutRedirectUrisOf(client),
    backchannel_logout_uri: client.backchannelLogoutUri,
    // How it authenticates at the token endpoint (RFC 7591 2): none for a public client, private_key_jwt for
    // one that holds keys (docs/rules/tokens.md#client-assertions), else its secret.
    token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? (isPublicClient(client) ? "none" : "client_secret_basic"),
    public: client.isPublic,
    first_party: client.firstParty,
    require_pushed_authorization_requests: client.requirePar,
    created_at: client.createdAt.toISOString(),
  };
}
