// Registering a client on a person's behalf (the settings page's form, the CLI's client:create, the dev seed):
// RFC 6749 2 and the rules of docs/rules/tokens.md#clients. Only an account whose address is confirmed
// registers clients (account pre-hijacking: docs/rules/accounts.md#unconfirmed-accounts); whatever an account
// registered before its first confirmation is deleted by it (src/accounts/lifecycle.ts). Clients that register
// themselves (RFC 7591) have no owner and go through src/registration/. A client's name is one a person reads
// (on the consent page): readableName() refuses control, format (bidi) and line-break characters in it
// (src/http/input-text.ts).
import { recordEventInTx } from "@/audit/record-event";
import { z } from "zod";
import { emailConfirmed } from "@/accounts/confirmed";
import { readableName } from "@/http/input-text";
import { badRequest, forbidden } from "@/http/errors";
import { parseInput } from "@/http/validate";
import { digest, randomSecret } from "@/secrets";
import { write } from "@/db/client";
import { redirectUriProblem } from "@/clients/redirect-uri";
import { parseClientJwks } from "@/clients/client-keys";
import { logoutUrisProblem } from "@/clients/logout-uris";
import { GRANT_TYPES, REDIRECTING_GRANT_TYPES, representClient, type GrantType } from "@/clients/represent";

export const ZCreateClient = z.object({
  ownerId: z.number().int().positive(),
  name: readableName(100),
  grantType: z.enum(GRANT_TYPES, { error: "must be authorization_code, implicit, password, client_credentials or device_code" }),
  redirectUris: z
    .array(z.string().trim(), { error: "must be a list of URIs" })
    .max(20, "at most 20 redirect URIs")
    .default([]),
  isPublic: z.boolean().default(false),
  firstParty: z.boolean().default(false),
  /**
   * RFC 9126 6: the client must push its authorization requests
   * (docs/rules/tokens.md#pushed-authorization-requests).
   */
  requirePar: z.boolean().default(false),
  /**
   * Public keys (a JWK Set) for client assertions (docs/rules/tokens.md#client-keys): the client then
   * authenticates with private_key_jwt only and gets no secret.
   */
  jwks: z.unknown().optional(),
  /** docs/rules/openid-connect.md#logout and #back-channel-logout (src/clients/logout-uris.ts). */
  postLogoutRedirectUris: z.array(z.string().trim(), { error: "must be a list of URIs" }).default([]),
  backchannelLogoutUri: z.string().trim().nullable().default(null),
});
export type TCreateClient = z.input<typeof ZCreateClient>;

/** The 403's sentence (a whole sentence: the settings page shows it as it is). */
export const UNCONFIRMED = "Confirm your e-mail address before you register a client: open the link we mailed you, or ask for a new one on the home page.";

/**
 * A client's addresses as stored, or the 400 that refuses them (docs/rules/tokens.md#redirect-uris,
 * docs/rules/openid-connect.md#logout): the same rules for a new client and an edited one
 * (src/clients/update-client.ts). Duplicates are dropped; "redirect_uris.<n>" counts distinct URIs.
 */
export function checkedAddresses(grantType: GrantType, typedRedirectUris: readonly string[], typedPostLogoutRedirectUris: readonly string[], typedBackchannelLogoutUri: string | null) {
  const redirectUris = [...new Set(typedRedirectUris)];
  redirectUris.forEach((uri, index) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw badRequest(`redirect_uris.${index}: ${problem}`);
  });
  if (REDIRECTING_GRANT_TYPES.includes(grantType) && redirectUris.length === 0) {
    throw badRequest(`redirect_uris: a ${grantType} client needs at least one redirect URI`);
  }
  // The device flow and client credentials never redirect a browser to the client
  // (docs/rules/tokens.md#device-flow).
  if ((grantType === "client_credentials" || grantType === "device_code") && redirectUris.length > 0) {
    throw badRequest(`redirect_uris: a ${grantType} client has no redirect URIs`);
  }
  const postLogoutRedirectUris = [...new Set(typedPostLogoutRedirectUris)];
  const backchannelLogoutUri = typedBackchannelLogoutUri || null;
  const logoutProblem = logoutUrisProblem(grantType, postLogoutRedirectUris, backchannelLogoutUri);
  if (logoutProblem) throw badRequest(logoutProblem);
  return { redirectUris, postLogoutRedirectUris, backchannelLogoutUri };
}

/**
 * Registers a client (docs/rules/tokens.md#clients). Returns the client representation with its secret, shown
 * this once and stored only as a digest; `client_secret` is null for a public client.
 */
export async function createClient(input: TCreateClient) {
  const data = parseInput(ZCreateClient, input);
  const { redirectUris, postLogoutRedirectUris, backchannelLogoutUri } = checkedAddresses(data.grantType, data.redirectUris, data.postLogoutRedirectUris, data.backchannelLogoutUri);
  // Clients that act for their owner must prove who they are (docs/rules/tokens.md#clients).
  if ((data.grantType === "password" || data.grantType === "client_credentials") && data.isPublic) {
    throw badRequest(`public: a ${data.grantType} client must keep a secret`);
  }
  // Confirmation only ever comes, never goes: a check before the write cannot let an unconfirmed account in.
  let jwks: string | null = null;
  if (data.jwks !== undefined) {
    if (data.isPublic) throw badRequest("jwks: a public client holds no keys");
    const parsed = await parseClientJwks(data.jwks);
    if ("problem" in parsed) throw badRequest(`jwks: ${parsed.problem}`);
    jwks = parsed.jwks;
  }
  if (!(await emailConfirmed(data.ownerId))) throw forbidden(UNCONFIRMED);
  const secret = data.isPublic || jwks !== null ? null : randomSecret();
  const client = await write(async (tx) => {
    const created = await tx.client.create({
      data: {
        clientId: randomSecret(16),
        name: data.name,
        ownerId: data.ownerId,
        grantType: data.grantType,
        isPublic: data.isPublic,
        firstParty: data.firstParty,
        requirePar: data.requirePar,
        secretDigest: secret ? digest(secret) : null,
        redirectUris: JSON.stringify(redirectUris),
        jwks,
        tokenEndpointAuthMethod: jwks !== null ? "private_key_jwt" : null,
        postLogoutRedirectUris: JSON.stringify(postLogoutRedirectUris),
        backchannelLogoutUri,
      },
      include: { owner: true },
    });
    await recordEventInTx(tx, { type: "client.created", userId: data.ownerId, clientId: created.clientId, detail: { grant_type: data.grantType, public: data.isPublic } });
    return created;
  });
  return { ...representClient(client, data.ownerId), client_secret: secret };
}
