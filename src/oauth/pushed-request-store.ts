// The stored side of pushed authorization requests (RFC 9126;
// docs/rules/tokens.md#pushed-authorization-requests), read by the authorization endpoint: a live, unused
// request_uri of the client that pushed it (found by the digest of its random part; the handle itself is never
// stored), its parameters, and when it was received, which is what a pushed prompt=login is measured against
// (docs/rules/tokens.md#front-channel). Used once: the use is a conditional write (claim first), so that of
// uses that race exactly one wins.
import { now } from "@/clock";
import { digest } from "@/secrets";
import { db, write } from "@/db/client";

export const REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:";

/** The stored parameters of a live, unused request_uri of this client, and when it was pushed; or null. */
export async function pushedParams(requestUri: string, clientId: number): Promise<{ id: number; query: URLSearchParams; receivedAt: Date } | null> {
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return null;
  const row = await (await db()).pushedAuthorizationRequest.findUnique({ where: { digest: digest(requestUri.slice(REQUEST_URI_PREFIX.length)) } });
  if (!row || row.clientId !== clientId || row.usedAt || row.expiresAt <= now()) return null;
  return { id: row.id, query: new URLSearchParams(JSON.parse(row.params) as Array<[string, string]>), receivedAt: row.createdAt };
}

/** Uses a pushed request up: true for exactly one caller, while it is unused and unexpired. */
export async function claimPushedRequest(id: number): Promise<boolean> {
  const at = now();
  const { count } = await write((tx) => tx.pushedAuthorizationRequest.updateMany({ where: { id, usedAt: null, expiresAt: { gt: at } }, data: { usedAt: at } }));
  return count === 1;
}
