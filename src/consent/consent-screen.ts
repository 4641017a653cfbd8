// What the consent page shows for a sealed authorization request (or a device flow's approval: no redirect
// host, and the user code the person typed, to compare with the one on the device), and where "Not you?
// Switch account" starts the same request again for another account (a sealed request belongs to the user
// it was made for, so the request itself is rebuilt from it: the authorization endpoint checks it anew).
// A client that registered itself has no owner (docs/rules/tokens.md#dynamic-registration); one that
// registered while registration was open is marked unverified (anyone could have named it anything); a logo is
// shown only for verified clients. A client named by its metadata document
// (docs/rules/tokens.md#client-id-metadata-documents) is shown by the document's host, the one thing about it
// that is known, and is unverified.
import { isUnverified } from "@/registration/client-metadata";
import { db } from "@/db/client";
import { isMetadataDocumentClient } from "@/client-metadata-documents/document-client";
import { consentCsrfToken, openRequest, type AuthorizationRequest } from "@/oauth/authorization-request";
import { formatScope, type Scope } from "@/oauth/scope";
import { resourceUri } from "@/oauth/resource";

export type ConsentScreen = {
  clientId: string;
  clientName: string;
  /** Null for a client that registered itself. */
  ownerName: string | null;
  unverified: boolean;
  /** The host of a metadata document client's client_id (its identity); null for every other client. */
  documentHost: string | null;
  /** https only, and only for a verified client. */
  logoUri: string | null;
  scopes: Scope[];
  redirectHost: string | null;
  userCode: string | null;
  csrf: string;
  /** The request to start again after signing in as someone else. */
  restartUrl: string;
};

/** The authorization request (or device page) that produced this sealed request, as a path on this site. */
export function restartUrl(request: AuthorizationRequest): string {
  if (request.responseType === "device_code") return `/device?user_code=${encodeURIComponent(request.userCode ?? "")}`;
  const query = new URLSearchParams({
    response_type: request.responseType,
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    scope: formatScope(request.scopes),
    state: request.state,
  });
  if (request.codeChallenge) {
    query.set("code_challenge", request.codeChallenge);
    query.set("code_challenge_method", "S256");
  }
  if (request.nonce) query.set("nonce", request.nonce);
  if (request.audience) query.set("resource", resourceUri(request.audience));
  return `/api/connect/oauth2/auth/?${query}`;
}

export async function loadConsentScreen(sealed: string, userId: number): Promise<ConsentScreen | null> {
  const request = sealed ? openRequest(sealed, userId) : null;
  if (!request) return null;
  const client = await (await db()).client.findUnique({ where: { clientId: request.clientId }, include: { owner: true } });
  if (!client) return null;
  return {
    clientId: client.clientId,
    clientName: client.name,
    ownerName: client.owner?.name ?? null,
    unverified: isUnverified(client),
    documentHost: isMetadataDocumentClient(client) ? new URL(client.clientId).host : null,
    logoUri: isUnverified(client) ? null : client.logoUri,
    scopes: request.scopes,
    redirectHost: request.responseType === "device_code" ? null : new URL(request.redirectUri).host,
    userCode: request.responseType === "device_code" ? (request.userCode ?? null) : null,
    csrf: consentCsrfToken(userId, sealed),
    restartUrl: restartUrl(request),
  };
}
