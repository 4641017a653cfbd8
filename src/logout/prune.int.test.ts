// tokens:prune and back-channel logout (src/maintenance/prune-tokens.ts, docs/rules/operations.md#admin-cli):
// a session's record of the clients it signed in to goes a day after the session ended, never while the
// session has not ended; a logout token's queue row goes 30 days after it was queued, once sent or failed for
// good, never while it is still to be delivered.
import { describe, expect, it } from "vitest";
import { nowMs } from "@/clock";
import { db } from "@/db/client";
import { pruneTokens } from "@/maintenance/prune-tokens";
import { makeClient, makeUser } from "@/testing/factories";

const DAY = 24 * 3600 * 1000;
const ago = (ms: number) => new Date(nowMs() - ms);

describe("tokens:prune and back-channel logout", () => {
  it("removes ended sessions' client records a day after they ended, and finished logout tokens after 30 days", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id, grantType: "authorization_code", redirectUris: ["https://rp.example/cb"] });
    const prisma = await db();
    const row = await prisma.client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    const sid = (label: string) => `${label}-${row.id}-${Math.random().toString(36).slice(2)}`;
    const sessions = {
      endedLongAgo: await prisma.sessionClient.create({ data: { sid: sid("a"), userId: user.id, clientId: row.id, createdAt: ago(40 * DAY), endedAt: ago(2 * DAY) } }),
      endedJustNow: await prisma.sessionClient.create({ data: { sid: sid("b"), userId: user.id, clientId: row.id, createdAt: ago(40 * DAY), endedAt: ago(3600 * 1000) } }),
      neverEnded: await prisma.sessionClient.create({ data: { sid: sid("c"), userId: user.id, clientId: row.id, createdAt: ago(400 * DAY), endedAt: null } }),
    };
    const delivery = (status: string, createdAt: Date) =>
      prisma.logoutDelivery.create({ data: { clientId: row.id, sub: String(user.id), sid: sid("d"), jti: sid("jti"), status, createdAt, nextAttemptAt: createdAt } });
    const deliveries = {
      sentLongAgo: await delivery("sent", ago(31 * DAY)),
      failedLongAgo: await delivery("failed", ago(31 * DAY)),
      pendingLongAgo: await delivery("pending", ago(31 * DAY)),
      sendingLongAgo: await delivery("sending", ago(31 * DAY)),
      sentRecently: await delivery("sent", ago(29 * DAY)),
    };

    const counts = await pruneTokens();
    expect(counts.session_clients).toBeGreaterThanOrEqual(1);
    expect(counts.logout_deliveries).toBeGreaterThanOrEqual(2);
    const left = new Set((await prisma.sessionClient.findMany({ where: { clientId: row.id } })).map((r) => r.id));
    expect([left.has(sessions.endedLongAgo.id), left.has(sessions.endedJustNow.id), left.has(sessions.neverEnded.id)]).toEqual([false, true, true]);
    const queued = new Set((await prisma.logoutDelivery.findMany({ where: { clientId: row.id } })).map((r) => r.id));
    expect(Object.fromEntries(Object.entries(deliveries).map(([name, r]) => [name, queued.has(r.id)]))).toEqual({
      sentLongAgo: false,
      failedLongAgo: false,
      pendingLongAgo: true,
      sendingLongAgo: true,
      sentRecently: true,
    });
  });
});
