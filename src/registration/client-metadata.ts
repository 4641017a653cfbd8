// Client metadata of dynamic registration (RFC 7591 2, docs/rules/tokens.md#dynamic-registration), checked by
// the rules every client follows (docs/rules/tokens.md#clients, docs/rules/tokens.md#redirect-uris), and the
// client information response (RFC 7591 3.2.1, RFC 7592 3).
// - grant_types: one client grant type of this service (authorization_code, implicit, or the device grant),
//   with refresh_token alongside where that grant issues refresh tokens; default ["authorization_code"]
//   (RFC 7591 2). password and client_credentials act for an owner, and a registered client has none:
//   invalid_client_metadata.
// - response_types must agree with the grant type (2.1): code for authorization_code, token for implicit,
//   none for the device grant.
// - token_endpoint_auth_method: client_secret_basic (the default), client_secret_post, or none (a public
//   client; PKCE is then required), or private_key_jwt (docs/rules/tokens.md#client-assertions: no secret, the
//   client signs assertions with a key of its `jwks`, which it must then send). Implicit clients are public
//   (docs/rules/tokens.md#clients): none.
// - jwks: the client's public keys (docs/rules/tokens.md#client-keys); jwks_uri is refused (the server fetches
//   no key from a URL a client gives).
// - redirect_uris: the rules of docs/rules/tokens.md#redirect-uris (a custom scheme, a fragment, http off
//   loopback: invalid_redirect_uri); required for code and implicit, refused for the device grant.
// - client_uri (http or https), logo_uri (https only), scope (known scopes), client_name,
//   require_pushed_authorization_requests (RFC 9126 6), application_type (OpenID Connect Registration 2: web,
//   the default, or native; docs/rules/tokens.md#redirect-uris). Unknown fields are ignored (RFC 7591 2).
// - post_logout_redirect_uris (OpenID Connect RP-Initiated Logout 1.0 3.1) and backchannel_logout_uri
//   (Back-Channel Logout 1.0 2.2): src/clients/logout-uris.ts (invalid_client_metadata);
//   backchannel_logout_session_required is answered true, as every logout token carries sid
//   (docs/rules/openid-connect.md#back-channel-logout).
// - client_name is a name a person reads (on the consent page): no control, format (bidi) or line-break
//   characters (src/http/input-text.ts readableName()).
import { z } from "zod";
import { readableName } from "@/http/input-text";
import type { Client } from "@/generated/sqlite/client";
import { env } from "@/env";
import { redirectUriProblem } from "@/clients/redirect-uri";
import { clientKeysOf, parseClientJwks } from "@/clients/client-keys";
import { logoutUrisProblem, postLogoutRedirectUrisOf } from "@/clients/logout-uris";
import { logoUriProblem } from "@/clients/logo-uri";
import { isMetadataDocumentClient } from "@/client-metadata-documents/document-client";
import { redirectUrisOf, type GrantType } from "@/clients/represent";
import { OAuthError } from "@/oauth/errors";
import { formatScope, parseScope } from "@/oauth/scope";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"] as const;

const ZClientMetadata = z.object({
  client_name: readableName(100).optional(),
  redirect_uris: z.array(z.string()).max(20).optional(),
  grant_types: z.array(z.string()).min(1).max(5).optional(),
  response_types: z.array(z.string()).max(5).optional(),
  token_endpoint_auth_method: z.enum(AUTH_METHODS).optional(),
  scope: z.string().max(200).optional(),
  client_uri: z.string().max(2000).optional(),
  logo_uri: z.string().max(2000).optional(),
  require_pushed_authorization_requests: z.boolean().optional(),
  jwks: z.unknown().optional(),
  jwks_uri: z.unknown().optional(),
  post_logout_redirect_uris: z.array(z.string()).max(20).optional(),
  backchannel_logout_uri: z.string().max(2000).optional(),
  application_type: z.enum(["web", "native"]).optional(),
});

/** What a registration (or an RFC 7592 update) stores. */
export type ClientRegistration = {
  name: string;
  grantType: GrantType;
  redirectUris: string[];
  isPublic: boolean;
  tokenEndpointAuthMethod: (typeof AUTH_METHODS)[number];
  scope: string | null;
  clientUri: string | null;
  logoUri: string | null;
  requirePar: boolean;
  /** The stored JWK Set (src/clients/client-keys.ts), or null. */
  jwks: string | null;
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string | null;
  applicationType: "web" | "native";
};

const invalidMetadata = (detail: string) => new OAuthError("invalid_client_metadata", {}, detail);

function webUrl(value: string | undefined, field: string, httpsOnly: boolean): string | null {
  if (value === undefined || value === "") return null;
  if (!URL.canParse(value)) throw invalidMetadata(`${field}: not an absolute URL`);
  const protocol = new URL(value).protocol;
  if (protocol !== "https:" && (httpsOnly || protocol !== "http:")) throw invalidMetadata(`${field}: must use ${httpsOnly ? "https" : "http or https"}`);
  return value;
}

/** logo_uri: the rule of src/clients/logo-uri.ts, which an owner's edit on /settings/clients follows too. */
function logoUriOf(value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  const problem = logoUriProblem(value);
  if (problem) throw invalidMetadata(`logo_uri: ${problem}`);
  return value;
}

/** The client grant type that a grant_types list names (RFC 7591 2), or invalid_client_metadata. */
function grantTypeOf(grantTypes: readonly string[]): GrantType {
  const names = new Set(grantTypes.map((name) => (name === DEVICE_GRANT ? "device_code" : name)));
  const refresh = names.delete("refresh_token");
  if (names.size !== 1) throw invalidMetadata("grant_types: exactly one grant type (with refresh_token where it applies)");
  const [grant] = [...names] as [string];
  if (grant === "password" || grant === "client_credentials") throw invalidMetadata(`grant_types: a ${grant} client acts for its owner, and a registered client has none`);
  if (grant !== "authorization_code" && grant !== "implicit" && grant !== "device_code") throw invalidMetadata(`grant_types: ${grant} is not supported`);
  if (refresh && grant === "implicit") throw invalidMetadata("grant_types: implicit clients get no refresh tokens");
  return grant;
}

const RESPONSE_TYPE: Record<string, string | null> = { authorization_code: "code", implicit: "token", device_code: null };

/** Parses and checks registration metadata; throws invalid_client_metadata or invalid_redirect_uri. */
export async function parseClientMetadata(body: unknown): Promise<ClientRegistration> {
  const parsed = ZClientMetadata.safeParse(body);
  if (!parsed.success) throw invalidMetadata(`${parsed.error.issues[0]?.path.join(".") || "body"}: ${parsed.error.issues[0]?.message}`);
  const data = parsed.data;
  const grantType = grantTypeOf(data.grant_types ?? ["authorization_code"]);
  const responseType = RESPONSE_TYPE[grantType]!;
  const responseTypes = data.response_types ?? (responseType ? [responseType] : []);
  if (responseTypes.length !== (responseType ? 1 : 0) || (responseType && responseTypes[0] !== responseType)) {
    throw invalidMetadata(`response_types: must be ${responseType ? `["${responseType}"]` : "empty"} for ${grantType}`);
  }
  const method = data.token_endpoint_auth_method ?? (grantType === "implicit" ? "none" : "client_secret_basic");
  if (grantType === "implicit" && method !== "none") throw invalidMetadata("token_endpoint_auth_method: implicit clients are public (none)");
  if (data.jwks_uri !== undefined) throw invalidMetadata("jwks_uri: not supported; send the keys as jwks");
  let jwks: string | null = null;
  if (data.jwks !== undefined) {
    if (method === "none") throw invalidMetadata("jwks: a public client holds no keys");
    const parsed = await parseClientJwks(data.jwks);
    if ("problem" in parsed) throw invalidMetadata(`jwks: ${parsed.problem}`);
    jwks = parsed.jwks;
  }
  if (method === "private_key_jwt" && jwks === null) throw invalidMetadata("jwks: required for private_key_jwt");

  const redirectUris = [...new Set(data.redirect_uris ?? [])];
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError("invalid_redirect_uri", {}, `${uri}: ${problem}`);
  }
  if (responseType && redirectUris.length === 0) throw new OAuthError("invalid_redirect_uri", {}, "redirect_uris: required");
  if (!responseType && redirectUris.length > 0) throw new OAuthError("invalid_redirect_uri", {}, "redirect_uris: a device client has none");

  const postLogoutRedirectUris = [...new Set(data.post_logout_redirect_uris ?? [])];
  const backchannelLogoutUri = data.backchannel_logout_uri || null;
  const logoutProblem = logoutUrisProblem(grantType, postLogoutRedirectUris, backchannelLogoutUri);
  if (logoutProblem) throw invalidMetadata(logoutProblem);

  let scope: string | null = null;
  if (data.scope !== undefined && data.scope.trim() !== "") {
    try {
      scope = formatScope(parseScope(data.scope) ?? []);
    } catch {
      throw invalidMetadata("scope: unknown scope");
    }
  }
  return {
    name: data.client_name ?? "Unnamed application",
    grantType,
    redirectUris,
    isPublic: method === "none",
    tokenEndpointAuthMethod: method,
    scope,
    clientUri: webUrl(data.client_uri, "client_uri", false),
    logoUri: logoUriOf(data.logo_uri),
    requirePar: data.require_pushed_authorization_requests ?? false,
    jwks,
    postLogoutRedirectUris,
    backchannelLogoutUri,
    applicationType: data.application_type ?? "web",
  };
}

/**
 * Registered while registration was open, or named by its metadata document: nobody vouched for its name
 * (docs/rules/tokens.md#dynamic-registration, docs/rules/tokens.md#client-id-metadata-documents).
 */
export function isUnverified(client: Pick<Client, "registeredVia">): boolean {
  return client.registeredVia === "open" || isMetadataDocumentClient(client);
}

export const registrationClientUri = (clientId: string) => `${env().appUrl}/api/connect/oauth2/register/${encodeURIComponent(clientId)}/`;

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** RFC 7591 3.2.1 / RFC 7592 3: the client's metadata as registered, with what the server added. */
export function clientInformation(client: Client, extra: { clientSecret?: string | null; registrationAccessToken: string }) {
  const grantTypes =
    client.grantType === "authorization_code"
      ? ["authorization_code", "refresh_token"]
      : client.grantType === "device_code"
        ? [DEVICE_GRANT, "refresh_token"]
        : [client.grantType];
  const responseType = RESPONSE_TYPE[client.grantType];
  return {
    client_id: client.clientId,
    ...(extra.clientSecret ? { client_secret: extra.clientSecret, client_secret_expires_at: 0 } : {}),
    client_id_issued_at: seconds(client.createdAt),
    registration_access_token: extra.registrationAccessToken,
    registration_client_uri: registrationClientUri(client.clientId),
    client_name: client.name,
    redirect_uris: redirectUrisOf(client),
    grant_types: grantTypes,
    response_types: responseType ? [responseType] : [],
    token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? (client.isPublic ? "none" : "client_secret_basic"),
    ...(client.scope ? { scope: client.scope } : {}),
    ...(client.clientUri ? { client_uri: client.clientUri } : {}),
    ...(client.logoUri ? { logo_uri: client.logoUri } : {}),
    require_pushed_authorization_requests: client.requirePar,
    ...(client.jwks ? { jwks: clientKeysOf(client) } : {}),
    ...(postLogoutRedirectUrisOf(client).length ? { post_logout_redirect_uris: postLogoutRedirectUrisOf(client) } : {}),
    ...(client.backchannelLogoutUri ? { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: true } : {}),
    application_type: client.applicationType,
  };
}
