// What every grant handler of the token endpoint is (src/token-endpoint/token-endpoint.ts picks one by grant_type,
// RFC 6749 4): a function of the authenticated client, the request's parameters and the request's context,
// answering the token record or throwing an OAuthError.
import type { Client } from "@/generated/sqlite/client";
import type { Audience } from "@/oauth/resource";
import type { TokenRecord } from "@/oauth/tokens";

/** What a grant needs from the request beyond its parameters. */
export type GrantContext = {
  /** The thumbprint of the request's DPoP proof key (RFC 9449 5), or null for a bearer token request. */
  jkt: string | null;
  /** The resource the request's `resource` names (RFC 8707 2.2), or null when it names none. */
  audience: Audience | null;
};

export type GrantHandler = (client: Client, params: Record<string, unknown>, context: GrantContext) => Promise<TokenRecord>;
