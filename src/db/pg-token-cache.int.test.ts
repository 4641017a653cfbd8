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
import { holdCommitsWith, INVALIDATION_NOTICE, PgTokenCache, STALENESS_MS } from "@/db/pg-token-cache";
import type { BearerToken } from "@/db/bearer-token";
import { passwordSession } from "@/testing/factories";
import { until } from "@/testing/until";

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

/**
 * The token bearerToken() answers for `key` from this process's cache: two reads in a row give the same frozen
 * object, which the cache holds. Read again while a late heartbeat (a loaded machine) or a commit of another
 * test file makes it ask the database; a cache that never answers fails here.
 */
async function hit(cache: PgTokenCache, key: string) {
  for (let attempt = 0; attempt < 400; attempt++) {
    const first = await bearerToken(key, now());
    const second = await bearerToken(key, now());
    if (first !== null && second === first && cache.get(key, now().getTime()) === first) return first;
    await sleep(5);
  }
  throw new Error("the cache never answered a hit");
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
    const first = await hit(cache, key);
    expect(first).toMatchObject({ userId: s.user.id, userName: "Test User" });
    expect(Object.isFrozen(first)).toBe(true);
    advanceClock(3600 * 1000);
    expect(cache.get(key, now().getTime())).toBeUndefined();
    expect(await bearerToken(key, now())).toBeNull();
  });

  it("a change committed by any connection empties it on every instance within STALENESS_MS, with no wait at the writer", async () => {
    const s = await passwordSession();
    const key = digest(s.accessToken);
    const cache = await warm(key);
    await hit(cache, key);
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
    await hit(cache, key);
    // This instance's listener now lags: the revocation's notification reaches it only when released. The
    // revocation, through Prisma, completes STALENESS_MS after its commit; by then the newest heartbeat this
    // instance has applied is too old for a hit, so it asks the database. (On a loaded machine this would pass
    // without the hold too; the hold itself is proved by order, without timing, in "holds back the completion
    // of a commit that invalidated" below.)
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
    await hit(cache, key);
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
    expect(await hit(cache, key)).toMatchObject({ userName: "Renamed While Deaf" });
  }, 20_000);
});

describe.skipIf(!onPostgres)("the token cache's triggers (prisma/postgresql/migrations/20261124000000_token_cache, 20261128000000_client_cache)", () => {
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
    // A registered client's row, kept whole (20261128000000_client_cache): any column, or its deletion.
    expect(await notices(`UPDATE "Client" SET "name" = 'Other' WHERE "id" = $1`, [token.clientId])).toBe(1);
    expect(await notices(`UPDATE "Client" SET "secretDigest" = 'other' WHERE "id" = $1`, [token.clientId])).toBe(1);
    expect(await notices(`DELETE FROM "Client" WHERE "id" = $1`, [token.clientId])).toBe(1);
    expect(await notices(`UPDATE "AccessToken" SET "revokedAt" = now() WHERE "userId" = $1 OR "id" = $2`, [user, token.id])).toBe(1);
    // What it does not: issuing and rotating tokens, a grant's use, a user's other columns, a metadata
    // document's row refreshed (never kept).
    expect(await notices(`UPDATE "Grant" SET "lastUsedAt" = now() WHERE "id" = $1`, [token.grantId])).toBe(0);
    expect(await notices(`UPDATE "RefreshToken" SET "usedAt" = now() WHERE "grantId" = $1`, [token.grantId])).toBe(0);
    expect(await notices(`INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "expiresAt") VALUES ('x', $1, $2, $3, 'readonly', now())`, [token.grantId, token.clientId, user])).toBe(0);
    expect(await notices(`UPDATE "User" SET "sessionVersion" = "sessionVersion" + 1, "name" = "name" WHERE "id" = $1`, [user])).toBe(0);
    await outside.query(`UPDATE "Client" SET "metadataDocumentExpiresAt" = now() WHERE "id" = $1`, [token.clientId]); // (committed: a metadata document's row)
    expect(await notices(`UPDATE "Client" SET "name" = 'Other', "metadataDocumentExpiresAt" = now() WHERE "id" = $1`, [token.clientId])).toBe(0);
    // TRUNCATE fires no row trigger: a statement trigger of its own (rolled back with the rest).
    expect(await notices(`TRUNCATE "AccessToken"`)).toBe(1);
  });
});

/** A cache of the test's own (not this process's): it listens on a connection of its own, like an instance. */
async function ownCache(): Promise<PgTokenCache> {
  return new PgTokenCache((env().database as { url: string }).url, 100, 5_000);
}

/** Waits until `cache` may answer hits (a heartbeat back), reading `key` meanwhile to keep the heartbeats going. */
async function fresh(cache: PgTokenCache, key: string): Promise<void> {
  await until(() => (cache.get(key, now().getTime()), cache.fresh), () => "a heartbeat back at the test's own cache");
}

/**
 * What `cache` answers for `key` at a moment when it may answer hits at all (fresh before and after the read,
 * so that a miss is a real miss and not a stale lease).
 */
async function answer(cache: PgTokenCache, key: string): Promise<BearerToken | undefined> {
  let result: BearerToken | undefined;
  let answered = false;
  await until(() => {
    if (!cache.fresh) return (cache.get(key, now().getTime()), false);
    result = cache.get(key, now().getTime());
    answered = cache.fresh;
    return answered;
  }, () => "a moment when the cache may answer");
  return result;
}

const tokenNamed = (userName: string): BearerToken =>
  Object.freeze({ userId: 1, clientId: 1, scopes: "readonly", userName, userEmail: "x@example.test", firstParty: false, jkt: null, audience: "/api" });

describe.skipIf(!onPostgres)("the PostgreSQL token cache's own rules (src/db/pg-token-cache.ts)", () => {
  it("refuses a fill by a lookup that began before an invalidation arrived (a stale read), and takes one that began after", async () => {
    const s = await passwordSession();
    const key = digest(s.accessToken);
    const cache = await ownCache();
    try {
      await fresh(cache, key);
      const before = cache.generation; // a lookup starts here and reads the row...
      await outside.query(`UPDATE "User" SET "name" = 'Renamed Meanwhile' WHERE "id" = $1`, [s.user.id]);
      await until(() => cache.generation !== before, () => "the invalidation at the test's own cache");
      cache.put(key, tokenNamed("Test User"), now().getTime() + 60_000, before); // ...and fills after it arrived
      expect(await answer(cache, key)).toBeUndefined();
      // A lookup that began after it fills it (put again when a commit of another test file empties it meanwhile).
      const after = tokenNamed("Renamed Meanwhile");
      await until(() => {
        if (cache.get(key, now().getTime()) === after) return true;
        cache.put(key, after, now().getTime() + 60_000, cache.generation);
        return false;
      }, () => "a fill by a lookup that began after the invalidation, answered");
    } finally {
      await cache.close();
    }
  });

  it("drops what it was given before it listened: a token cached then is never answered", async () => {
    const cache = await ownCache();
    try {
      const key = digest(`never-listened-${Math.random()}`);
      cache.put(key, tokenNamed("Before Listening"), now().getTime() + 60_000, cache.generation); // no listener yet
      expect(await answer(cache, key)).toBeUndefined();
    } finally {
      await cache.close();
    }
  });

  it("a late heartbeat counts from when it was sent: one that arrives more than STALENESS_MS after leaves the cache stale", async () => {
    const key = digest(`late-heartbeat-${Math.random()}`);
    const cache = await ownCache();
    try {
      await fresh(cache, key);
      // The listener lags: everything from now on queues, unapplied. The cache sends one heartbeat at a time, so
      // once one is queued no other is sent; wait until the queued ones are all older than STALENESS_MS.
      const release = cache.hold();
      const late = () => {
        const sent = release.heartbeatsSentAt();
        return sent.length > 0 && performance.now() - Math.max(...sent) > STALENESS_MS;
      };
      await until(() => (cache.get(key, now().getTime()), late()), () => "a queued heartbeat older than STALENESS_MS");
      expect(cache.fresh).toBe(false);
      release(); // they arrive now, late
      expect(cache.fresh).toBe(false);
      await fresh(cache, key); // and the next heartbeat, sent after, makes it fresh again
    } finally {
      await cache.close();
    }
  });

  it("holds back the completion of a commit that invalidated until its hold ends, the change already committed and seen by others", async () => {
    const s = await passwordSession();
    let entered!: () => void;
    const held = new Promise<"held">((resolve) => (entered = () => resolve("held")));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let holds = 0;
    holdCommitsWith(() => {
      holds++;
      entered();
      return gate;
    });
    try {
      // Through Prisma (a promise on the pool's connection).
      let completed = false;
      const writing = write((tx) => tx.user.update({ where: { id: s.user.id }, data: { name: "Held Back" } })).then(() => {
        completed = true;
        return "completed" as const;
      });
      expect(await Promise.race([held, writing])).toBe("held");
      expect(completed).toBe(false);
      const { rows } = await outside.query<{ name: string }>(`SELECT "name" FROM "User" WHERE "id" = $1`, [s.user.id]);
      expect(rows[0]!.name).toBe("Held Back"); // committed, and its caller not told yet
      open();
      await writing;
      expect(holds).toBe(1);
      // A commit that invalidates nothing is not held.
      await write((tx) => tx.grant.updateMany({ where: { userId: s.user.id }, data: { lastUsedAt: now() } }));
      expect(holds).toBe(1);
    } finally {
      holdCommitsWith(null);
      open();
    }
  });

  it("holds back a statement of its own through the pool's callback too (the hot statements' way)", async () => {
    const s = await passwordSession();
    const d = await driver();
    if (d.kind !== "postgresql") throw new Error("not PostgreSQL");
    let entered!: () => void;
    const held = new Promise<"held">((resolve) => (entered = () => resolve("held")));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    holdCommitsWith(() => {
      entered();
      return gate;
    });
    try {
      const writing = new Promise<"completed">((resolve, reject) =>
        d.pool.query(`UPDATE "AccessToken" SET "revokedAt" = now() WHERE "userId" = $1`, [s.user.id], (error) => (error ? reject(error) : resolve("completed"))),
      );
      expect(await Promise.race([held, writing])).toBe("held");
      const { rows } = await outside.query<{ live: string }>(`SELECT count(*) AS live FROM "AccessToken" WHERE "userId" = $1 AND "revokedAt" IS NULL`, [s.user.id]);
      expect(Number(rows[0]!.live)).toBe(0);
      open();
      expect(await writing).toBe("completed");
    } finally {
      holdCommitsWith(null);
      open();
    }
  });
});
