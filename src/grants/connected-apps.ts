// The apps that a user let use their account (/settings/apps; docs/rules/pages.md#connected-apps). An app is
// listed when the user approved it on the consent page (a remembered Consent, which lets it through without
// asking again, even before it has used a token) or when it holds a live token of the user (a password or
// client of the user's own, a device, a public client asked every time). Each shows the scopes approved or
// granted, when it was approved (or first connected), and when it last got a token.
//
// Disconnecting forgets the consent (the app must ask again) and revokes every grant of that client for the
// user, with all its tokens, in one transaction that also records `consent.revoked` and, when live tokens
// went, `token.revoked` (docs/rules/operations.md#audit-log).
import { recordEventInTx } from "@/audit/record-event";
import { now } from "@/clock";
import { db, write, type Tx } from "@/db/client";
import { storedScopes, type Scope } from "@/oauth/scope";

export type ConnectedApp = {
  clientId: string;
  name: string;
  ownerName: string;
  scopes: Scope[];
  /** When the user approved it on the consent page (remembered consent); null when never asked. */
  approvedAt: Date | null;
  /** The earliest of the approval and the live grants. */
  since: Date;
  /** When it last got a token; null when it has no live token (approved, not used yet). */
  lastUsedAt: Date | null;
};

const union = (...lists: Scope[][]) => storedScopes(lists.flat().join(" "));

export async function listConnectedApps(userId: number): Promise<ConnectedApp[]> {
  const at = now();
  const client = await db();
  const include = { client: { include: { owner: { select: { name: true } } } } } as const;
  const [consents, grants] = await Promise.all([
    client.consent.findMany({ where: { userId }, include }),
    client.grant.findMany({
      where: {
        userId,
        revokedAt: null,
        OR: [{ accessTokens: { some: { revokedAt: null, expiresAt: { gt: at } } } }, { refreshTokens: { some: { revokedAt: null, usedAt: null, expiresAt: { gt: at } } } }],
      },
      include,
    }),
  ]);
  const apps = new Map<number, ConnectedApp>();
  const entry = (row: (typeof consents)[number] | (typeof grants)[number]) => {
    let app = apps.get(row.clientId);
    if (!app) {
      app = { clientId: row.client.clientId, name: row.client.name, ownerName: row.client.owner?.name ?? "nobody (it registered itself)", scopes: [], approvedAt: null, since: row.createdAt, lastUsedAt: null };
      apps.set(row.clientId, app);
    }
    return app;
  };
  for (const consent of consents) {
    const app = entry(consent);
    app.scopes = union(app.scopes, storedScopes(consent.scopes));
    app.approvedAt = consent.createdAt;
    if (consent.createdAt < app.since) app.since = consent.createdAt;
  }
  for (const grant of grants) {
    const app = entry(grant);
    app.scopes = union(app.scopes, storedScopes(grant.scopes));
    if (grant.createdAt < app.since) app.since = grant.createdAt;
    if (!app.lastUsedAt || grant.lastUsedAt > app.lastUsedAt) app.lastUsedAt = grant.lastUsedAt;
  }
  const recency = (app: ConnectedApp) => (app.lastUsedAt ?? app.since).getTime();
  return [...apps.values()].sort((a, b) => recency(b) - recency(a) || a.name.localeCompare(b.name));
}

export type Disconnected = { found: boolean; consentForgotten: boolean; grantsRevoked: number; tokensRevoked: number };

/** Revokes one grant (its row first, so that a concurrent refresh serialises with it) and counts its live tokens. */
async function revokeGrantCounting(tx: Tx, grantId: number, at: Date): Promise<number> {
  await tx.grant.updateMany({ where: { id: grantId, revokedAt: null }, data: { revokedAt: at } });
  const access = await tx.accessToken.updateMany({ where: { grantId, revokedAt: null, expiresAt: { gt: at } }, data: { revokedAt: at } });
  const refresh = await tx.refreshToken.updateMany({ where: { grantId, revokedAt: null, usedAt: null, expiresAt: { gt: at } }, data: { revokedAt: at } });
  // The rest (expired, or used refresh tokens kept for reuse detection) end with the grant too.
  await tx.accessToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: at } });
  await tx.refreshToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: at } });
  return access.count + refresh.count;
}

export async function disconnectApp(options: { userId: number; clientId: string }): Promise<Disconnected> {
  const { userId } = options;
  const client = await (await db()).client.findUnique({ where: { clientId: options.clientId }, select: { id: true, clientId: true } });
  if (!client) return { found: false, consentForgotten: false, grantsRevoked: 0, tokensRevoked: 0 };
  return write(async (tx) => {
    const at = now();
    // The first statement writes (SQLite: a read first could not be upgraded under a concurrent writer).
    const consent = await tx.consent.deleteMany({ where: { userId, clientId: client.id } });
    const grants = await tx.grant.findMany({ where: { userId, clientId: client.id, revokedAt: null }, select: { id: true } });
    let tokensRevoked = 0;
    for (const grant of grants) tokensRevoked += await revokeGrantCounting(tx, grant.id, at);
    if (consent.count > 0 || grants.length > 0) {
      await recordEventInTx(tx, { type: "consent.revoked", userId, clientId: client.clientId, detail: { consent: consent.count > 0, grants: grants.length } });
    }
    if (tokensRevoked > 0) {
      await recordEventInTx(tx, { type: "token.revoked", userId, clientId: client.clientId, detail: { reason: "app disconnected", tokens: tokensRevoked } });
    }
    return { found: true, consentForgotten: consent.count > 0, grantsRevoked: grants.length, tokensRevoked };
  });
}
