// What the consent page shows for a sealed authorization request (or a device flow's approval: no redirect
// host, and the user code the person typed, to compare with the one on the device).
import { db } from "@/server/db";
import { consentCsrfToken, openRequest } from "@/oauth/authorization-request";
import type { Scope } from "@/oauth/scope";

export type ConsentScreen = { clientName: string; ownerName: string; scopes: Scope[]; redirectHost: string | null; userCode: string | null; csrf: string };

export async function loadConsentScreen(sealed: string, userId: number): Promise<ConsentScreen | null> {
  const request = sealed ? openRequest(sealed, userId) : null;
  if (!request) return null;
  const client = await (await db()).client.findUnique({ where: { clientId: request.clientId }, include: { owner: true } });
  if (!client) return null;
  return {
    clientName: client.name,
    ownerName: client.owner.name,
    scopes: request.scopes,
    redirectHost: request.responseType === "device_code" ? null : new URL(request.redirectUri).host,
    userCode: request.responseType === "device_code" ? (request.userCode ?? null) : null,
    csrf: consentCsrfToken(userId, sealed),
  };
}
