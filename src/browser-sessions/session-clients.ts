// Which clients a browser session has signed in to, and what its end queues (OpenID Connect Back-Channel
// Logout 1.0 sections 2.1, 2.4 and 2.5; docs/rules/openid-connect.md#back-channel-logout).
//
// A browser session carries a random `sid` (src/auth/options.ts). Each id_token issued in it records the
// pair (sid, client). When the session ends (sign-out, the logout endpoint, sign out everywhere, a password
// reset), its pairs are claimed (one conditional update sets endedAt), and in the same transaction a logout
// token is queued for every claimed client that registered a backchannel_logout_uri (a LogoutDelivery row,
// delivered by src/logout/deliver-logout.ts). A pair is claimed once only, so two sign-outs of one session
// racing each other queue one token per client between them; an ended pair stays, so that a refresh of a grant
// from the ended session does not record it again.
import { now } from "@/clock";
import { randomSecret } from "@/secrets";
import { db, Prisma, write, type Tx } from "@/db/client";

/** Records that `clientId` (the row id) received an id_token in browser session `sid`. Idempotent. */
export async function recordSessionClient(sid: string, userId: number, clientId: number): Promise<void> {
  const existing = await (await db()).sessionClient.findUnique({ where: { sid_clientId: { sid, clientId } }, select: { id: true } });
  if (existing) return;
  try {
    await write((tx) => tx.sessionClient.create({ data: { sid, userId, clientId, createdAt: now() } }));
  } catch (error) {
    // A concurrent exchange in the same session recorded it first.
    if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002")) throw error;
  }
}

type Claimed = { sid: string; userId: number; clientId: number };

/** Queues a logout token for each claimed pair whose client takes them; returns the queued rows' ids. */
async function queue(tx: Tx, claimed: Claimed[]): Promise<number[]> {
  if (claimed.length === 0) return [];
  const receivers = await tx.client.findMany({
    where: { id: { in: [...new Set(claimed.map((row) => row.clientId))] }, backchannelLogoutUri: { not: null } },
    select: { id: true },
  });
  const takes = new Set(receivers.map((client) => client.id));
  const at = now();
  const queued: number[] = [];
  for (const row of claimed) {
    if (!takes.has(row.clientId)) continue;
    const delivery = await tx.logoutDelivery.create({
      data: { clientId: row.clientId, sub: String(row.userId), sid: row.sid, jti: randomSecret(16), status: "pending", createdAt: at, nextAttemptAt: at },
      select: { id: true },
    });
    queued.push(delivery.id);
  }
  return queued;
}

const CLAIMED = { sid: true, userId: true, clientId: true } as const;

/**
 * Ends browser session `sid` inside the caller's transaction; returns the ids of the queued logout tokens.
 * The claim (one conditional update) is the transaction's first statement.
 */
export async function endBrowserSessionInTx(tx: Tx, sid: string): Promise<number[]> {
  return queue(tx, await tx.sessionClient.updateManyAndReturn({ where: { sid, endedAt: null }, data: { endedAt: now() }, select: CLAIMED }));
}

/** Ends every browser session of the user inside the caller's transaction (sign out everywhere). */
export async function endUserSessionsInTx(tx: Tx, userId: number): Promise<number[]> {
  return queue(tx, await tx.sessionClient.updateManyAndReturn({ where: { userId, endedAt: null }, data: { endedAt: now() }, select: CLAIMED }));
}
