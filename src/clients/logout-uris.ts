// A client's logout addresses (OpenID Connect RP-Initiated Logout 1.0 3.1, Back-Channel Logout 1.0 2.2;
// docs/rules/openid-connect.md#logout, docs/rules/openid-connect.md#back-channel-logout): the post-logout
// redirect URIs and the back-channel logout URI follow the rules of redirect URIs
// (docs/rules/tokens.md#redirect-uris: https, or http on a loopback host; no fragment, no credentials). A
// post-logout redirect URI is matched exactly, port included. Only a code client gets id_tokens, so only it
// registers a back-channel logout URI; only clients that redirect a browser register post-logout redirect URIs.
import type { Client } from "@/generated/sqlite/client";
import { redirectUriProblem } from "@/clients/redirect-uri";

export const MAX_POST_LOGOUT_REDIRECT_URIS = 20;

export function postLogoutRedirectUrisOf(client: Pick<Client, "postLogoutRedirectUris">): string[] {
  return JSON.parse(client.postLogoutRedirectUris) as string[];
}

/**
 * Why these logout addresses cannot be registered for a client of `grantType`, as "field: problem", or null.
 * `postLogoutRedirectUris` must already be free of duplicates.
 */
export function logoutUrisProblem(grantType: string, postLogoutRedirectUris: readonly string[], backchannelLogoutUri: string | null): string | null {
  if (postLogoutRedirectUris.length > MAX_POST_LOGOUT_REDIRECT_URIS) return `post_logout_redirect_uris: at most ${MAX_POST_LOGOUT_REDIRECT_URIS}`;
  if (postLogoutRedirectUris.length > 0 && grantType !== "authorization_code" && grantType !== "implicit") {
    return `post_logout_redirect_uris: a ${grantType} client has none`;
  }
  for (const [index, uri] of postLogoutRedirectUris.entries()) {
    const problem = redirectUriProblem(uri);
    if (problem) return `post_logout_redirect_uris.${index}: ${problem}`;
  }
  if (backchannelLogoutUri !== null) {
    if (grantType !== "authorization_code") return `backchannel_logout_uri: a ${grantType} client gets no id_tokens`;
    const problem = redirectUriProblem(backchannelLogoutUri);
    if (problem) return `backchannel_logout_uri: ${problem}`;
  }
  return null;
}
