// What the consent page shows for a sealed authorization request (or a device flow's approval: no redirect
// host, and the user code the person typed, to compare with the one on the device).
// CONTRACT.md 13: a client that registered itself has no owner; one that registered while registration was
// open is marked unverified (anyone could have named it anything); a logo is shown only for verified clients.
import { isUnverified } from "@/registration/client-metadata";
import { db } from "@/server/db";
import { consentCsrfToken, openRequest } from "@/oauth/authorization-request";
import type { Scope } from "@/oauth/scope";

export type ConsentScreen = {
  clientName: string;
  /** Null for a client that registered itself. */
  ownerName: string | null;
  unverified: boolean;
  /** https only, and only for a verified client. */
  logoUri: string | null;
  scopes: Scope[]; redirectHost: string | null; userCode: string | null; csrf: string };

export async function loadConsentScreen(sealed: string, userId: number): Promise<ConsentScreen | null> {
  const request = sealed ? openRequest(sealed, userId) : null;
  if (!request) return null;
  const client = await (await db()).client.findUnique({ where: { clientId: request.clientId }, include: { owner: true } });
  if (!client) return null;
  return {
    clientName: client.name,
    ownerName: client.owner?.name ?? null,
    unverified: isUnverified(client),
    logoUri: isUnverified(client) ? null : client.logoUri,
    scopes: request.scopes,
    redirectHost: request.responseType === "device_code" ? null : new URL(request.redirectUri).host,
    userCode: request.responseType === "device_code" ? (request.userCode ?? null) : null,
    csrf: consentCsrfToken(userId, sealed),
  };
}
