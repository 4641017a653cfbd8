// What the consent page shows for a sealed authorization request.
import { db } from "@/server/db";
import { consentCsrfToken, openRequest } from "@/oauth/authorization-request";
import type { Scope } from "@/oauth/scope";

export type ConsentScreen = { clientName: string; ownerName: string; scopes: Scope[]; redirectHost: string; csrf: string };

export async function loadConsentScreen(sealed: string, userId: number): Promise<ConsentScreen | null> {
  const request = sealed ? openRequest(sealed, userId) : null;
  if (!request) return null;
  const client = await (await db()).client.findUnique({ where: { clientId: request.clientId }, include: { owner: true } });
  if (!client) return null;
  return {
    clientName: client.name,
    ownerName: client.owner.name,
    scopes: request.scopes,
    redirectHost: new URL(request.redirectUri).host,
    csrf: consentCsrfToken(userId, sealed),
  };
}
