// The validated-token cache on PostgreSQL and its lease (src/db/pg-token-cache.ts), on the suite's
// database when it is PostgreSQL (CI's second run); on SQLite these tests have nothing to test and say so.
// The cross-instance rule itself, through two server processes, is src/db/bearer-cache-instances.int.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { advanceClock, now, resetClock } from "@/clock";
import { env } from "@/env";
import { bearerToken } from "@/db/fast-sql";
import { digest } from "@/secrets";
import { db, driver, write } from "@/db/client";
import { INVALIDATION_NOTICE, STALENESS_MS, type PgTokenCache } from "@/db/pg-token-cache";
import { passwordSession } from "@/testing/factories";

const onPostgres = env().database.kind === "postgresql";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
afterEach(() => resetClock());

/** This process's cache, warm: `key` read once and a heartbeat received since, so the next read may hit. */
async function warm(key: string): Promise<PgTokenCache> {
  const d = await driver();
  if (d.kind !== "postgresql" || !d.tokenCache) throw new Error("no PostgreSQL token cache");
  const cache = d.tokenCache;
  await bearerToken(key, now());
  const started = Date.now();
  while (!cache.fresh) {
    if (Date.now() - started > 10_000) throw new Error("no heartbeat within 10 s");
    await sleep(2);
    cache.get(key, now().getTime()); // (a read keeps the heartbeats going)
  }
  return cache;
}

/** A connection of its own, as psql or another program would make: outside the pool, so nothing waits. */
let outside: pg.Client;
beforeAll(async () => {
  if (!onPostgres) return;
  outside = new pg.Client({ connectionString: (env().database as { url: string }).url });
  await outside.connect();
});
afterAll(async () => {
  await outside?.end();
});

describe.skipIf(!onPostgres)("the PostgreSQL token cache", () => {
  it("answers a live token it has read from the cache (the same frozen object) once a heartbeat is back, never past its expiry", async () => {
    const s = await passwordSession();
    const key = digest(s.accessToken);
    const cache = await warm(key);
    const first = await bearerToken(key, now());
    expect(first).toMatchObject({ userId: s.user.id, userName: "Test User" });
    expect(Object.isFrozen(first)).toBe(true);
    expect(await bearerToken(key, now())).toBe(first);
    expect(cache.get(key, now().getTime())).toBe(first);
    advanceClock(3600 * 1000);
    expect(cache.get(key, now().getTime())).toBeUndefined();
    expect(await bearerToken(key, now())).toBeNull();
  });

  it("a change committed by any connection empties it on every instance within STALENESS_MS, with no wait at the writer", async () => {
    const s = await passwordSession();
    const key = digest(s.accessToken);
    const cache = await warm(key);
    const first = await bearerToken(key, now());
    expect(await bearerToken(key, now())).toBe(first);
    await outside.query(`UPDATE "User" SET "name" = 'Renamed Outside' WHERE "id" = $1`, [s.user.id]);
    await sleep(STALENESS_MS);
    expect(await bearerToken(key, now())).toMatchObject({ userId: s.user.id, userName: "Renamed Outside" });
    await warm(key);
    await outside.query(`UPDATE "Grant" SET "revokedAt" = now() WHERE "id" = (SELECT "grantId" FROM "AccessToken" WHERE "digest" = $1)`, [key]);
    await sleep(STALENESS_MS);
    expect(await bearerToken(key, now())).toBeNull();
    expect(cache.get(key, now().getTime())).toBeUndefined();
  });

  it("a change made through the pool completes only once a lagging instance can no longer answer from its cache", async () => {
    const s = await passwordSession();
    const key = digest(s.accessToken);
    const cache = await warm(key);
    const cached = await bearerToken(key, now());
    expect(await bearerToken(key, now())).toBe(cached);
    // This instance's listener now lags: the revocation's notification reaches it only when released. The
    // revocation, through Prisma, completes STALENESS_MS after its commit; by then the newest heartbeat this
    // instance has applied is too old for a hit, so it asks the database.
    const release = cache.hold();
    try {
      await write((tx) => tx.accessToken.updateMany({ where: { digest: key }, data: { revokedAt: now() } }));
      expect(cache.fresh).toBe(false);
      expect(await bearerToken(key, now())).toBeNull();
    } finally {
      release();
    }
  });

  it("after its listening connection is lost it answers from the database, then listens again", async () => {
    const s = await passwordSession();
    const key = digest(s.accessToken);
    const cache = await warm(key);
    const cached = await bearerToken(key, now());
    expect(await bearerToken(key, now())).toBe(cached);
    const { rows } = await outside.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE query LIKE 'NOTIFY "token_cache_hb_%' AND pid <> pg_backend_pid() AND datname = current_database()`);
    const pids = rows.map((row) => row.pid);
    expect(pids.length).toBeGreaterThan(0);
    await outside.query(`SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid`, [pids]);
    await outside.query(`UPDATE "User" SET "name" = 'Renamed While Deaf' WHERE "id" = $1`, [s.user.id]);
    await sleep(STALENESS_MS);
    expect(cache.fresh).toBe(false); // (no heartbeat since; it listens again only after RETRY_AFTER_MS)
    expect(await bearerToken(key, now())).toMatchObject({ userName: "Renamed While Deaf" });
    // It listens again (after RETRY_AFTER_MS) and answers from the cache once more.
    await warm(key);
    const again = await bearerToken(key, now());
    expect(again).toMatchObject({ userName: "Renamed While Deaf" });
    expect(await bearerToken(key, now())).toBe(again);
  }, 20_000);
});

describe.skipIf(!onPostgres)("the token cache's triggers (prisma/postgresql/migrations/20261124000000_token_cache)", () => {
  /** Whether running `sql` in a transaction of its own raised the invalidation notice, and how often. */
  async function notices(sql: string, values: unknown[] = []): Promise<number> {
    let count = 0;
    const heard = (notice: { message?: string }) => void (notice.message === INVALIDATION_NOTICE && count++);
    outside.on("notice", heard);
    try {
      await outside.query("BEGIN");
      await outside.query(sql, values);
      await outside.query("ROLLBACK");
    } finally {
      outside.off("notice", heard);
    }
    return count;
  }

  it("fire once per transaction for every change a cached answer depends on, and for nothing else", async () => {
    const s = await passwordSession();
    const key = digest(s.accessToken);
    const token = await (await db()).accessToken.findUniqueOrThrow({ where: { digest: key } });
    const user = s.user.id;
    // What a cached answer depends on:
    expect(await notices(`UPDATE "AccessToken" SET "revokedAt" = now() WHERE "id" = $1`, [token.id])).toBe(1);
    expect(await notices(`DELETE FROM "AccessToken" WHERE "id" = $1`, [token.id])).toBe(1);
    expect(await notices(`UPDATE "Grant" SET "revokedAt" = now() WHERE "id" = $1`, [token.grantId])).toBe(1);
    expect(await notices(`DELETE FROM "Grant" WHERE "id" = $1`, [token.grantId])).toBe(1); // (its tokens, by cascade)
    expect(await notices(`UPDATE "User" SET "name" = 'Other' WHERE "id" = $1`, [user])).toBe(1);
    expect(await notices(`UPDATE "User" SET "email" = 'other-' || "email" WHERE "id" = $1`, [user])).toBe(1);
    expect(await notices(`DELETE FROM "User" WHERE "id" = $1`, [user])).toBe(1);
    expect(await notices(`UPDATE "Client" SET "firstParty" = NOT "firstParty" WHERE "id" = $1`, [token.clientId])).toBe(1);
    expect(await notices(`UPDATE "AccessToken" SET "revokedAt" = now() WHERE "userId" = $1 OR "id" = $2`, [user, token.id])).toBe(1);
    // What it does not: issuing and rotating tokens, a grant's use, a user's other columns, a client's name.
    expect(await notices(`UPDATE "Grant" SET "lastUsedAt" = now() WHERE "id" = $1`, [token.grantId])).toBe(0);
    expect(await notices(`UPDATE "RefreshToken" SET "usedAt" = now() WHERE "grantId" = $1`, [token.grantId])).toBe(0);
    expect(await notices(`INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "expiresAt") VALUES ('x', $1, $2, $3, 'readonly', now())`, [token.grantId, token.clientId, user])).toBe(0);
    expect(await notices(`UPDATE "User" SET "sessionVersion" = "sessionVersion" + 1, "name" = "name" WHERE "id" = $1`, [user])).toBe(0);
    expect(await notices(`UPDATE "Client" SET "name" = 'Other' WHERE "id" = $1`, [token.clientId])).toBe(0);
    // TRUNCATE fires no row trigger: a statement trigger of its own (rolled back with the rest).
    expect(await notices(`TRUNCATE "AccessToken"`)).toBe(1);
  });
});
