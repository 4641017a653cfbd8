// The PostgreSQL token cache's lease, rule by rule (src/db/pg-token-cache.ts), in one process: each test makes
// cache objects of its own, each listening on a connection of its own exactly as another instance's would, so
// that what one instance commits reaches the other only through PostgreSQL's notifications. The monotonic
// clock the lease reads (performance.now()) is held still and moved by the test, so that every bound of the
// lease (STALENESS_MS, the idle stop, the lost heartbeat, the retry) is placed exactly, without timing
// anything. On SQLite these tests have nothing to test and say so.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { nowMs } from "@/clock";
import { env, setEnvForTests } from "@/env";
import { createBundle } from "@/bundles/create-bundle";
import { digest } from "@/secrets";
import { closePgTokenCache, holdCommitsWith, INVALIDATION_NOTICE, PAGE_NOTICE, PgTokenCache, pgTokenCache, settleCommits, STALENESS_MS } from "@/db/pg-token-cache";
import type { BearerToken } from "@/db/bearer-token";
import { makeUser, passwordSession } from "@/testing/factories";
import { startTcpProxy } from "@/testing/tcp-proxy";
import { until } from "@/testing/until";

const onPostgres = env().database.kind === "postgresql";
const url = () => (env().database as { url: string }).url;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The lease's other bounds (src/db/pg-token-cache.ts keeps them private).
const IDLE_AFTER_MS = 2_000;
const LOST_AFTER_MS = 5_000;
const RETRY_AFTER_MS = 1_000;

/**
 * The monotonic clock, held at a moment the test chooses (every heartbeat then carries that moment): a whole
 * millisecond, so that the bounds added to it are exact.
 */
const realNow = performance.now.bind(performance);
let heldAt = 0;
function holdClock(): number {
  heldAt = Math.ceil(realNow());
  performance.now = () => heldAt;
  return heldAt;
}
function moveClock(to: number): void {
  heldAt = to;
}
afterEach(() => {
  Reflect.deleteProperty(performance, "now");
  holdCommitsWith(null);
});

const caches: PgTokenCache[] = [];
/** An instance's cache: its own listening connection, nothing shared with this process's. */
function instance(size = 100): PgTokenCache {
  const cache = new PgTokenCache(url(), size, 5_000);
  caches.push(cache);
  return cache;
}
afterEach(async () => {
  await Promise.all(caches.splice(0).map((cache) => cache.close()));
});

const tokenNamed = (userName: string): BearerToken =>
  Object.freeze({ userId: 1, clientId: 1, scopes: "readonly", userName, userEmail: "x@example.test", firstParty: false, jkt: null, audience: "/api" });
const key = (name: string) => digest(`${name}-${Math.random()}`);
const LATER = () => nowMs() + 3_600_000;

/** Reads (which keeps the heartbeats going) until a heartbeat sent at the clock's moment is back. */
async function freshAt(cache: PgTokenCache, digestKey = "none"): Promise<void> {
  await until(() => (cache.get(digestKey, nowMs()), cache.fresh), () => "a heartbeat back at the test's cache");
}

/** Puts `token` under the current generation and reads it back in the same turn (nothing can arrive between). */
function putAndGet(cache: PgTokenCache, digestKey: string, token: BearerToken, expiresAtMs = LATER()): BearerToken | undefined {
  cache.put(digestKey, token, expiresAtMs, cache.generation);
  return cache.get(digestKey, nowMs());
}

/** A connection of the test's own, as psql would make: what it commits no pool holds back. */
let outside: pg.Client;
beforeAll(async () => {
  if (!onPostgres) return;
  outside = new pg.Client({ connectionString: url() });
  await outside.connect();
});
afterAll(async () => {
  await outside?.end();
});

/** Every notification sent before this call has been applied by `cache` when it resolves (commit order). */
async function drained(cache: PgTokenCache): Promise<void> {
  const before = cache.pageGeneration;
  await outside.query(`NOTIFY "page_cache"`);
  await until(() => cache.pageGeneration !== before, () => "the test's own notification back at the cache");
}

describe.skipIf(!onPostgres)("the lease's bounds, on the monotonic clock", () => {
  it("answers from the cache only while its newest heartbeat was sent less than STALENESS_MS ago, and a token only before its expiry", async () => {
    const cache = instance();
    const sent = holdClock();
    await freshAt(cache);
    const k = key("lease");
    const token = tokenNamed("Lease");
    expect(putAndGet(cache, k, token)).toBe(token);
    moveClock(sent + STALENESS_MS - 1);
    expect(cache.fresh).toBe(true);
    expect(cache.pagesFresh()).toBe(true);
    expect(putAndGet(cache, k, token)).toBe(token);
    moveClock(sent + STALENESS_MS);
    expect(cache.fresh).toBe(false);
    expect(cache.pagesFresh()).toBe(false);
    expect(putAndGet(cache, k, token)).toBeUndefined();
    // The token's own expiry, on the service's clock: answered until the millisecond before, never at it.
    moveClock(sent);
    const at = nowMs();
    cache.put(k, token, at + 1, cache.generation);
    expect(cache.get(k, at)).toBe(token);
    expect(cache.get(k, at + 1)).toBeUndefined();
  });

  it("stops its heartbeats IDLE_AFTER_MS after the last read (no hit then), and a read starts them again", async () => {
    const cache = instance();
    const read = holdClock();
    await freshAt(cache);
    for (let i = 0; i < 3; i++) cache.pagesFresh(); // (reads while it beats: they start nothing more)
    // No read since `read`: at exactly IDLE_AFTER_MS later it still beats (a heartbeat sent then comes back)...
    moveClock(read + IDLE_AFTER_MS);
    await until(() => cache.fresh, () => "a heartbeat sent IDLE_AFTER_MS after the last read");
    // ...and past it, it stops: no heartbeat sent at the later moment ever comes back.
    moveClock(read + IDLE_AFTER_MS + STALENESS_MS);
    await sleep(100); // five heartbeat periods
    await drained(cache);
    expect(cache.fresh).toBe(false);
    // A page read starts them again, and counts as a read: it beats on until IDLE_AFTER_MS after it.
    const pageRead = read + IDLE_AFTER_MS + STALENESS_MS;
    expect(cache.pagesFresh()).toBe(false);
    await until(() => cache.fresh, () => "a heartbeat after the page read");
    moveClock(pageRead + IDLE_AFTER_MS);
    await until(() => cache.fresh, () => "a heartbeat IDLE_AFTER_MS after the page read");
  });

  it("one heartbeat at a time; one not back within LOST_AFTER_MS drops the connection and the cache, and a new one listens RETRY_AFTER_MS later", async () => {
    const cache = instance();
    const sent = holdClock();
    await freshAt(cache);
    const k = key("lost");
    const token = tokenNamed("Lost");
    expect(putAndGet(cache, k, token)).toBe(token);
    const release = cache.hold(); // the listener lags: what arrives now is queued, unapplied
    try {
      await until(() => release.heartbeatsSentAt().length > 0, () => "a heartbeat queued");
      await sleep(100); // five heartbeat periods: none is sent while one is out
      expect(release.heartbeatsSentAt()).toEqual([sent]);
      const generation = cache.generation;
      moveClock(sent + LOST_AFTER_MS);
      cache.get(k, nowMs());
      await sleep(100);
      expect(cache.generation).toBe(generation); // not lost yet
      const lostAt = sent + LOST_AFTER_MS + 1;
      moveClock(lostAt);
      await until(() => (cache.get(k, nowMs()), cache.generation !== generation), () => "the lost heartbeat's connection dropped");
      expect(cache.fresh).toBe(false);
      release(); // what the dropped connection queued is not applied: it is not the listener any more
      release();
      expect(cache.fresh).toBe(false);
      expect(cache.get(k, nowMs())).toBeUndefined();
      // It listens again RETRY_AFTER_MS after the drop, not before, and starts from an empty cache.
      moveClock(lostAt + RETRY_AFTER_MS - 1);
      cache.get(k, nowMs());
      await sleep(100); // five heartbeat periods, each of which asks for a connection
      expect(cache.fresh).toBe(false);
      const dropped = cache.generation;
      moveClock(lostAt + RETRY_AFTER_MS);
      await freshAt(cache, k);
      expect(cache.generation).not.toBe(dropped);
      expect(cache.get(k, nowMs())).toBeUndefined();
    } finally {
      release();
    }
  }, 20_000);

  it("its listening connection terminated: no answer from memory at once, none until it listens again, and nothing kept from before", async () => {
    const cache = instance();
    const sent = holdClock();
    await freshAt(cache);
    const k = key("terminated");
    const token = tokenNamed("Before The Break");
    expect(putAndGet(cache, k, token)).toBe(token);
    // The listener lags from here: a heartbeat it was sent before the break is queued, unapplied.
    const release = cache.hold();
    await until(() => release.heartbeatsSentAt().length > 0, () => "a heartbeat queued");
    // Its heartbeats carry the held moment: that names its connection among every instance's.
    const generation = cache.generation;
    const { rows } = await outside.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND datname = current_database()`, [`NOTIFY "token_cache_hb_%", '${sent}'`]);
    expect(rows).toHaveLength(1);
    await outside.query(`SELECT pg_terminate_backend($1)`, [rows[0]!.pid]);
    await until(() => cache.generation !== generation, () => "the terminated connection dropped");
    // The clock has not moved: only the drop itself makes the newest heartbeat count for nothing, and what the
    // terminated connection had queued is not applied (it is not the listener any more).
    expect(cache.fresh).toBe(false);
    release();
    expect(cache.fresh).toBe(false);
    expect(cache.pagesFresh()).toBe(false);
    expect(putAndGet(cache, k, token)).toBeUndefined();
    // A lookup that began after the drop fills it, but a new connection starts from an empty cache.
    cache.put(k, token, LATER(), cache.generation);
    moveClock(sent + RETRY_AFTER_MS);
    await freshAt(cache, k);
    expect(cache.get(k, nowMs())).toBeUndefined();
    expect(putAndGet(cache, k, token)).toBe(token);
  }, 20_000);

  it("the test hook hold(): a release ends its own hold only, once", async () => {
    const cache = instance();
    await freshAt(cache);
    const first = cache.hold();
    first();
    const second = cache.hold();
    first(); // (already released: the second hold goes on)
    await until(() => (cache.get("none", nowMs()), second.heartbeatsSentAt().length > 0), () => "a heartbeat queued in the second hold");
    second();
  });

  it("while the database cannot be reached it answers nothing from memory and tries again RETRY_AFTER_MS later, not before", async () => {
    const target = new URL(url());
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      await proxy.setMode("drop"); // a server that drops every connection
      const through = new URL(url());
      through.hostname = "127.0.0.1";
      through.port = String(proxy.port);
      const cache = new PgTokenCache(through.toString(), 100, 5_000);
      caches.push(cache);
      const k = key("unreachable");
      const token = tokenNamed("Unreachable");
      const failed = holdClock();
      cache.put(k, token, LATER(), cache.generation);
      expect(cache.get(k, nowMs())).toBeUndefined();
      await sleep(100); // its first attempt fails meanwhile
      await proxy.setMode("forward");
      moveClock(failed + RETRY_AFTER_MS - 1);
      cache.get(k, nowMs());
      await sleep(100); // five heartbeat periods, each of which asks for a connection
      expect(cache.fresh).toBe(false);
      moveClock(failed + RETRY_AFTER_MS);
      await freshAt(cache, k);
      expect(cache.get(k, nowMs())).toBeUndefined(); // (what was put before it listened is gone)
    } finally {
      await proxy.close();
    }
  }, 20_000);

  it("listens on one connection, however many heartbeat periods its making takes", async () => {
    const cache = instance();
    const at = holdClock();
    await freshAt(cache);
    const { rows } = await outside.query<{ query: string }>(`SELECT query FROM pg_stat_activity WHERE query LIKE $1 AND datname = current_database()`, [`NOTIFY "token_cache_hb_%", '${at}'`]);
    expect(rows).toHaveLength(1);
    const channel = /^NOTIFY "([^"]+)"/.exec(rows[0]!.query)![1]!;
    const { rows: sessions } = await outside.query(`SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND datname = current_database()`, [`%"${channel}"%`]);
    expect(sessions).toHaveLength(1);
  });

  it("once closed it never listens again, whatever is read", async () => {
    const cache = instance();
    holdClock();
    await freshAt(cache);
    await cache.close();
    expect(cache.fresh).toBe(false);
    for (let i = 0; i < 20; i++) {
      cache.get("none", nowMs());
      cache.pagesFresh();
      await sleep(5);
    }
    expect(cache.fresh).toBe(false);
    const late = new PgTokenCache(url(), 100, 5_000);
    const closing = late.close(); // closed before it was ever used: a read starts nothing
    late.get("none", nowMs());
    await closing;
    await sleep(100);
    expect(late.fresh).toBe(false);
  });
});

describe.skipIf(!onPostgres)("what the cache keeps", () => {
  it("keeps at most its size, dropping the oldest first; a size of 0 keeps nothing", async () => {
    const cache = instance(2);
    holdClock();
    await freshAt(cache);
    const [a, b, c] = [key("a"), key("b"), key("c")];
    const [ta, tb, tc] = [tokenNamed("A"), tokenNamed("B"), tokenNamed("C")];
    const generation = cache.generation;
    cache.put(a, ta, LATER(), generation);
    cache.put(b, tb, LATER(), generation);
    expect([cache.get(a, nowMs()), cache.get(b, nowMs())]).toEqual([ta, tb]);
    cache.put(c, tc, LATER(), generation);
    expect([cache.get(a, nowMs()), cache.get(b, nowMs()), cache.get(c, nowMs())]).toEqual([undefined, tb, tc]);
    const none = instance(0);
    await freshAt(none);
    expect(putAndGet(none, a, ta)).toBeUndefined();
  });

  it("a page change empties the pages only; a token change empties both", async () => {
    const a = instance();
    holdClock();
    await freshAt(a);
    const k = key("page");
    const token = tokenNamed("Page");
    const owner = await makeUser();
    // (A commit of another test file running beside this one may empty the cache meanwhile: try again then.)
    let pagesOnly = false;
    for (let attempt = 0; attempt < 20 && !pagesOnly; attempt++) {
      expect(putAndGet(a, k, token)).toBe(token);
      const [generation, pages] = [a.generation, a.pageGeneration];
      await createBundle({ ownerId: owner.id, name: "Page change" }); // through the pool: the page triggers
      await until(() => a.pageGeneration !== pages, () => "the page notification");
      pagesOnly = a.generation === generation && a.get(k, nowMs()) === token;
    }
    expect(pagesOnly).toBe(true);
    const [generation, pages] = [a.generation, a.pageGeneration];
    await outside.query(`UPDATE "User" SET "name" = 'Renamed For Both' WHERE "id" = $1`, [owner.id]);
    await until(() => a.generation !== generation, () => "the token notification");
    expect(a.pageGeneration).not.toBe(pages);
    expect(a.get(k, nowMs())).toBeUndefined();
  });
});

describe.skipIf(!onPostgres)("two instances in one process: a commit at B reaches A only through PostgreSQL", () => {
  it("a revocation committed at B completes only once A, lagging, can no longer answer it from its cache", async () => {
    const s = await passwordSession();
    const k = digest(s.accessToken);
    const a = instance();
    await freshAt(a, k);
    // Instance B: a connection of its own whose invalidating commits are held back, as the pool's are.
    const b = new pg.Client({ connectionString: url() });
    await b.connect();
    settleCommits(b);
    const token = tokenNamed("Test User");
    await until(() => putAndGet(a, k, token) === token, () => "the token answered at A");
    const release = a.hold(); // at once: A lags from the moment it answered the token
    try {
      await b.query(`UPDATE "AccessToken" SET "revokedAt" = now() WHERE "digest" = $1`, [k]);
      // B's caller is told only now; A has not applied the revocation (held), yet answers nothing from memory.
      expect(a.get(k, nowMs())).toBeUndefined();
      expect(a.fresh).toBe(false);
    } finally {
      release();
      await b.end();
    }
  });
});

describe.skipIf(!onPostgres)("settleCommits(): what is held back on a connection", () => {
  let client: pg.Client;
  let holds = 0;
  const notices: string[] = [];
  beforeAll(async () => {
    if (!onPostgres) return;
    client = new pg.Client({ connectionString: url() });
    await client.connect();
    client.on("notice", (notice) => notices.push(notice.message ?? ""));
    settleCommits(client);
  });
  afterAll(async () => {
    await client?.end();
  });
  const counting = () => {
    holds = 0;
    notices.length = 0;
    holdCommitsWith(async () => void holds++);
  };

  it("a statement that commits a change a token depends on, or a page does, is held; one that changes neither is not", async () => {
    const user = await makeUser();
    const bundle = await createBundle({ ownerId: user.id, name: "Held page" });
    counting();
    await client.query(`UPDATE "User" SET "name" = 'Held Once' WHERE "id" = $1`, [user.id]);
    expect(holds).toBe(1);
    await client.query(`UPDATE "User" SET "sessionVersion" = "sessionVersion" + 1 WHERE "id" = $1`, [user.id]);
    expect(holds).toBe(1);
    await client.query(`UPDATE "Bundle" SET "name" = 'Held page 2' WHERE "id" = $1`, [bundle.id]);
    expect(notices).toContain(PAGE_NOTICE);
    expect(holds).toBe(2);
    await client.query(`SELECT 1`);
    expect(holds).toBe(2);
  });

  it("in a transaction, only the statement that ends it is held", async () => {
    const user = await makeUser();
    counting();
    await client.query("BEGIN");
    await client.query(`UPDATE "User" SET "name" = 'In A Transaction' WHERE "id" = $1`, [user.id]);
    expect(notices).toEqual([INVALIDATION_NOTICE]);
    expect(holds).toBe(0);
    await client.query("COMMIT");
    expect(holds).toBe(1);
    await client.query(`SELECT 1`);
    expect(holds).toBe(1);
  });

  it("a statement that raised the notice and then failed committed nothing: neither it nor the next is held", async () => {
    const s = await passwordSession();
    const k = digest(s.accessToken);
    counting();
    // The row trigger raises the notice; the foreign key's check, after it, fails the statement.
    await expect(client.query(`UPDATE "AccessToken" SET "userId" = -1 WHERE "digest" = $1`, [k])).rejects.toThrow(/foreign key/);
    expect(notices).toEqual([INVALIDATION_NOTICE]);
    expect(holds).toBe(0);
    await client.query(`SELECT 1`);
    expect(holds).toBe(0);
    // The same through a callback.
    notices.length = 0;
    const failed = await new Promise<unknown>((resolve) => client.query(`UPDATE "AccessToken" SET "userId" = -1 WHERE "digest" = $1`, [k], (error) => resolve(error)));
    expect(failed).toBeInstanceOf(Error);
    expect(notices).toEqual([INVALIDATION_NOTICE]);
    await client.query(`SELECT 1`);
    expect(holds).toBe(0);
  });

  it("holds a callback's and a query config's callback alike, and passes a cursor-like query through untouched", async () => {
    const user = await makeUser();
    counting();
    let order: string[] = [];
    let open!: () => void;
    holdCommitsWith(() => {
      holds++;
      order.push("held");
      return new Promise<void>((resolve) => (open = resolve));
    });
    const byCallback = new Promise<unknown>((resolve) =>
      client.query(`UPDATE "User" SET "name" = 'By Callback' WHERE "id" = $1`, [user.id], (error, result) => {
        order.push("completed");
        resolve(error ?? result.rowCount);
      }),
    );
    await until(() => order.length > 0, () => "the callback's statement held or completed");
    expect(order).toEqual(["held"]);
    open();
    expect(await byCallback).toBe(1);
    expect(order).toEqual(["held", "completed"]);
    order = [];
    const byConfig = new Promise<unknown>((resolve) =>
      client.query({
        text: `UPDATE "User" SET "name" = 'By Config' WHERE "id" = $1`,
        values: [user.id],
        callback: (error: Error | null, result: pg.QueryResult) => {
          order.push("completed");
          resolve(error ?? result.rowCount);
        },
      } as unknown as pg.QueryConfig),
    );
    await until(() => order.length > 0, () => "the config's statement held or completed");
    expect(order).toEqual(["held"]);
    open();
    expect(await byConfig).toBe(1);
    expect(holds).toBe(2);
    // A Submittable (a cursor, a stream) is returned as is and runs as usual.
    const submitted = new pg.Query(`SELECT 1 AS one`);
    const returned = client.query(submitted as unknown as pg.QueryConfig) as unknown;
    expect(returned).toBe(submitted);
    const rows: unknown[] = [];
    await new Promise<void>((resolve, reject) => {
      submitted.on("row", (row: unknown) => rows.push(row));
      submitted.on("end", () => resolve());
      submitted.on("error", reject);
    });
    expect(rows).toEqual([{ one: 1 }]);
    expect(holds).toBe(2);
  });
});

describe.skipIf(!onPostgres)("this process's cache (pgTokenCache())", () => {
  it("is made once, only when TOKEN_CACHE_SIZE is not 0, and made again after it is closed", async () => {
    await closePgTokenCache();
    const previous = setEnvForTests({ tokenCacheSize: 0 });
    try {
      expect(pgTokenCache(1_000)).toBeNull();
      setEnvForTests({ tokenCacheSize: 1 });
      expect(pgTokenCache(1_000)).toBeNull(); // (kept: asked once)
      await closePgTokenCache();
      const made = pgTokenCache(1_000);
      expect(made).toBeInstanceOf(PgTokenCache);
      expect(pgTokenCache(1_000)).toBe(made);
      await closePgTokenCache();
      made!.get("none", nowMs());
      await sleep(100);
      expect(made!.fresh).toBe(false); // closed
      const again = pgTokenCache(1_000);
      expect(again).toBeInstanceOf(PgTokenCache);
      expect(again).not.toBe(made);
    } finally {
      setEnvForTests(previous);
      await closePgTokenCache();
    }
  });
});
