// The apps that hold access to a user's account (/settings/apps): one row per client with a live grant,
// with the scopes granted and when a token was last issued. Disconnecting revokes every grant of that
// client for the user and forgets the remembered consent, so the next sign-in asks again.
import { now } from "@/clock";
import { db, write } from "@/server/db";
import { storedScopes, type Scope } from "@/oauth/scope";
import { revokeGrantInTx } from "@/oauth/tokens";
import { recordEventInTx } from "@/audit/record-event";

export type ConnectedApp = { clientId: string; name: string; ownerName: string; scopes: Scope[]; lastUsedAt: Date; grants: number };

export async function listConnectedApps(userId: number): Promise<ConnectedApp[]> {
  const at = now();
  const grants = await (await db()).grant.findMany({
    where: {
      userId,
      revokedAt: null,
      OR: [{ accessTokens: { some: { revokedAt: null, expiresAt: { gt: at } } } }, { refreshTokens: { some: { revokedAt: null, usedAt: null, expiresAt: { gt: at } } } }],
    },
    include: { client: { include: { owner: true } } },
    orderBy: { lastUsedAt: "desc" },
  });
  const apps = new Map<number, ConnectedApp>();
  for (const grant of grants) {
    const existing = apps.get(grant.clientId);
    const scopes = storedScopes(grant.scopes);
    if (existing) {
      existing.grants += 1;
      existing.scopes = storedScopes([...existing.scopes, ...scopes].join(" "));
      continue;
    }
    apps.set(grant.clientId, { clientId: grant.client.clientId, name: grant.client.name, ownerName: grant.client.owner.name, scopes, lastUsedAt: grant.lastUsedAt, grants: 1 });
  }
  return [...apps.values()];
}

export async function disconnectApp(options: { userId: number; clientId: string }): Promise<number> {
  const client = await (await db()).client.findUnique({ where: { clientId: options.clientId } });
  if (!client) return 0;
  const grants = await (await db()).grant.findMany({ where: { userId: options.userId, clientId: client.id, revokedAt: null }, select: { id: true } });
  return write(async (tx) => {
    let revoked = 0;
    for (const grant of grants) revoked += await revokeGrantInTx(tx, grant.id, { type: "token.revoked", detail: { via: "disconnected" } });
    const forgotten = await tx.consent.deleteMany({ where: { userId: options.userId, clientId: client.id } });
    if (forgotten.count > 0) await recordEventInTx(tx, { type: "consent.revoked", userId: options.userId, clientId: client.clientId });
    return revoked;
  });
}
