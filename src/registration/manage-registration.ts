// Client configuration (RFC 7592, docs/rules/tokens.md#dynamic-registration) at the registration_client_uri,
// /api/connect/oauth2/register/<client_id>/, with the registration access token as a bearer: GET reads the
// client information, PUT replaces the metadata (every field, as in a registration; a client stays public
// or confidential as it registered: its secret cannot be added or taken away here), DELETE removes the
// client with every grant and token it holds (204). An unknown client, a client that did not register
// itself, and a wrong token all answer the same 401 (RFC 7592 2.1: nothing about which clients exist).
// The token is compared by digest in constant time; it stays valid until the client is deleted.
import type { Client } from "@/generated/sqlite/client";
import { recordEventInTx } from "@/audit/record-event";
import { ApiError } from "@/http/errors";
import { readBody } from "@/http/body";
import { json, noContent, NO_STORE } from "@/http/respond";
import { OAuthError } from "@/oauth/errors";
import { stringParam } from "@/oauth/params";
import { secretMatchesDigest } from "@/secrets";
import { write } from "@/db/client";
import { clientByClientId } from "@/db/fast-sql";
import { clientInformation, parseClientMetadata } from "@/registration/client-metadata";

const invalidToken = () => new ApiError(401, "invalid_token", { "WWW-Authenticate": 'Bearer error="invalid_token"' });

async function authorizedClient(request: Request, clientId: string): Promise<{ client: Client; token: string }> {
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(request.headers.get("authorization") ?? "");
  if (!match) throw invalidToken();
  const client = await clientByClientId(clientId);
  if (!client?.registrationTokenDigest || !secretMatchesDigest(match[1]!, client.registrationTokenDigest)) throw invalidToken();
  return { client, token: match[1]! };
}

export async function readRegistration(request: Request, clientId: string): Promise<Response> {
  const { client, token } = await authorizedClient(request, clientId);
  return json(clientInformation(client, { registrationAccessToken: token }), 200, NO_STORE);
}

export async function updateRegistration(request: Request, clientId: string): Promise<Response> {
  const { client, token } = await authorizedClient(request, clientId);
  const body = await readBody(request, { invalidMessage: "invalid_client_metadata" });
  // RFC 7592 2.2: the body names the client; a secret, if sent, must be its own.
  if (stringParam(body, "client_id") !== client.clientId) throw new OAuthError("invalid_request", {}, "client_id must be this client's");
  const secret = stringParam(body, "client_secret");
  if (secret !== undefined && (!client.secretDigest || !secretMatchesDigest(secret, client.secretDigest))) {
    throw new OAuthError("invalid_client_metadata", {}, "client_secret is not this client's");
  }
  const metadata = await parseClientMetadata(body);
  if (metadata.isPublic !== client.isPublic) throw new OAuthError("invalid_client_metadata", {}, "token_endpoint_auth_method cannot switch between none and a secret");
  // The secret is made at registration only: a client keeps proving itself the way it registered to (keys or
  // a secret); its keys may be replaced (docs/rules/tokens.md#client-keys).
  if ((metadata.tokenEndpointAuthMethod === "private_key_jwt") !== (client.tokenEndpointAuthMethod === "private_key_jwt")) {
    throw new OAuthError("invalid_client_metadata", {}, "token_endpoint_auth_method cannot switch between private_key_jwt and a secret");
  }
  const updated = await write((tx) =>
    tx.client.update({
      where: { id: client.id },
      data: {
        name: metadata.name,
        grantType: metadata.grantType,
        redirectUris: JSON.stringify(metadata.redirectUris),
        requirePar: metadata.requirePar,
        tokenEndpointAuthMethod: metadata.tokenEndpointAuthMethod,
        scope: metadata.scope,
        clientUri: metadata.clientUri,
        logoUri: metadata.logoUri,
        jwks: metadata.jwks,
        postLogoutRedirectUris: JSON.stringify(metadata.postLogoutRedirectUris),
        backchannelLogoutUri: metadata.backchannelLogoutUri,
        applicationType: metadata.applicationType,
      },
    }),
  );
  return json(clientInformation(updated, { registrationAccessToken: token }), 200, NO_STORE);
}

export async function deleteRegistration(request: Request, clientId: string): Promise<Response> {
  const { client } = await authorizedClient(request, clientId);
  await write(async (tx) => {
    await tx.client.deleteMany({ where: { id: client.id } });
    await recordEventInTx(tx, { type: "client.deleted", clientId: client.clientId, detail: { via: "registration" } });
  });
  return noContent();
}
