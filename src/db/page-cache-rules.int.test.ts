// The collection-page cache's own rules (src/db/page-cache.ts, docs/design.md#the-page-cache), through
// cachedPage() itself with pages the test makes, on the suite's database (SQLite, and PostgreSQL with
// TEST_DATABASE_URL): until when a kept page is answered, what is kept within its bounds, and that nothing read
// across a commit, nor under another connection or cache, is answered. Each check runs in one synchronous run,
// in which nothing can be committed or notified in between (on SQLite the reader's data_version is asked once
// per run; on PostgreSQL a notification is applied only between runs, and the monotonic clock the lease reads
// is held still so that the lease stays fresh). What the API answers is src/db/page-cache.int.test.ts.
import { afterEach, describe, expect, it } from "vitest";
import { connectedDriver, db, disconnectDb, driver, write } from "@/db/client";
import { readerVersion } from "@/db/fast-sql";
import { cachedPage, keptPages, MAX_PAGES, MAX_TEXT, type ReadPage } from "@/db/page-cache";
import { STALENESS_MS, type PgTokenCache } from "@/db/pg-token-cache";
import { env, setEnvForTests } from "@/env";
import { pageCacheHits } from "@/observability/metrics";
import { makeUser } from "@/testing/factories";
import { until } from "@/testing/until";

const onPostgres = env().database.kind === "postgresql";
const realNow = performance.now.bind(performance);
let heldAt = 0;
afterEach(() => {
  Reflect.deleteProperty(performance, "now");
});

/** The driver connected and, on PostgreSQL, this process's lease fresh and held so (the clock held still). */
async function ready(): Promise<void> {
  await db();
  const d = connectedDriver();
  if (d?.kind !== "postgresql") return;
  heldAt = Math.ceil(realNow());
  performance.now = () => heldAt;
  await until(() => d.tokenCache!.pagesFresh(), () => "a heartbeat back at this process's cache");
}

let names = 0;
const named = () => `page-rules-${process.pid}-${names++}`;
const read =
  <T extends object>(value: T, size: number, validUntilMs = Number.POSITIVE_INFINITY): (() => ReadPage<T>) =>
  () => ({ value, size, validUntilMs });
const kept = (): never => {
  throw new Error("read, although the page is kept");
};

/** A commit that every kept page may depend on, applied here (on PostgreSQL: its notification arrived). */
async function change(): Promise<void> {
  const d = await driver();
  const before = d.kind === "postgresql" ? d.tokenCache!.pageGeneration : 0;
  const user = await makeUser();
  await write((tx) => tx.bundle.create({ data: { name: "page rules", ownerId: user.id } }));
  if (d.kind === "postgresql") await until(() => d.tokenCache!.pageGeneration !== before, () => "the page notification");
}

describe("a kept page", () => {
  it("is answered until just before it stops being true, each answer counted, and a page read again replaces it", async () => {
    await ready();
    const name = named();
    const [first, second] = [{ page: 1 }, { page: 2 }];
    expect(cachedPage(name, 0, read(first, 10, 1_000))).toBe(first);
    const hits = pageCacheHits.count;
    expect(cachedPage(name, 999, kept)).toBe(first);
    expect(pageCacheHits.count).toBe(hits + 1);
    expect(cachedPage(name, 1_000, read(second, 20, 2_000))).toBe(second);
    expect(pageCacheHits.count).toBe(hits + 1);
    expect(cachedPage(name, 1_000, kept)).toBe(second);
  });

  it("is answered as its read was: at once when the read is, as a promise when the read is one", async () => {
    await ready();
    const name = named();
    const value = { asynchronous: true };
    const answer = cachedPage(name, 0, async () => ({ value, size: 1, validUntilMs: Number.POSITIVE_INFINITY }));
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toBe(value);
  });

  it("is not kept when a change was committed while it was read", async () => {
    await ready();
    const name = named();
    const value = { readAcrossACommit: true };
    const before = keptPages();
    const answer = cachedPage(name, 0, async () => {
      await change();
      return { value, size: 1, validUntilMs: Number.POSITIVE_INFINITY };
    });
    expect(await answer).toBe(value);
    expect(keptPages()).toEqual(before);
    const again = { readAgain: true };
    expect(cachedPage(name, 0, read(again, 1))).toBe(again);
  });

  it("is not answered after a commit", async () => {
    await ready();
    const name = named();
    const [first, second] = [{ before: true }, { after: true }];
    expect(cachedPage(name, 0, read(first, 1))).toBe(first);
    expect(cachedPage(name, 0, kept)).toBe(first);
    await change();
    await ready();
    expect(cachedPage(name, 0, read(second, 1))).toBe(second);
    expect(cachedPage(name, 0, kept)).toBe(second);
  });
});

describe("what the cache keeps", () => {
  it(`at most MAX_TEXT characters of JSON, the oldest dropped first; a larger page is never kept`, async () => {
    await ready();
    const [a, b, c, d, e] = [named(), named(), named(), named(), named()];
    const half = MAX_TEXT / 2;
    const [va, vb, vc, vd, ve] = [{ a: 1 }, { b: 1 }, { c: 1 }, { d: 1 }, { e: 1 }];
    // Exactly MAX_TEXT: both kept.
    cachedPage(a, 0, read(va, half));
    cachedPage(b, 0, read(vb, half));
    expect(keptPages()).toEqual({ pages: 2, text: MAX_TEXT });
    expect([cachedPage(a, 0, kept), cachedPage(b, 0, kept)]).toEqual([va, vb]);
    // One more character: the oldest goes.
    cachedPage(c, 0, read(vc, 1));
    expect(keptPages()).toEqual({ pages: 2, text: half + 1 });
    expect([cachedPage(b, 0, kept), cachedPage(c, 0, kept)]).toEqual([vb, vc]);
    // Larger than MAX_TEXT: answered, not kept, nothing dropped; exactly MAX_TEXT: kept, alone.
    expect(cachedPage(d, 0, read(vd, MAX_TEXT + 1))).toBe(vd);
    expect(keptPages()).toEqual({ pages: 2, text: half + 1 });
    expect(cachedPage(e, 0, read(ve, MAX_TEXT))).toBe(ve);
    expect(keptPages()).toEqual({ pages: 1, text: MAX_TEXT });
    expect(cachedPage(e, 0, kept)).toBe(ve);
  });

  it("a page read again counts once, as the newest", async () => {
    await ready();
    const [x, y, z] = [named(), named(), named()];
    const [vx, vy, vz, vx2, vx3] = [{ x: 1 }, { y: 1 }, { z: 1 }, { x: 2 }, { x: 3 }];
    cachedPage(x, 0, read(vx, MAX_TEXT, 1)); // (everything else dropped)
    cachedPage(x, 1, read(vx2, 1, 2)); // stopped being true at 1: read again, replacing it
    expect(keptPages()).toEqual({ pages: 1, text: 1 });
    cachedPage(y, 0, read(vy, 1));
    cachedPage(x, 2, read(vx3, 1)); // read again: now the newest
    expect(keptPages()).toEqual({ pages: 2, text: 2 });
    cachedPage(z, 0, read(vz, MAX_TEXT - 1)); // room for one more character: the oldest, y, goes
    expect(cachedPage(x, 0, kept)).toBe(vx3);
    expect(cachedPage(z, 0, kept)).toBe(vz);
    expect(keptPages()).toEqual({ pages: 2, text: MAX_TEXT });
  });

  it(`at most MAX_PAGES pages, the oldest dropped first`, async () => {
    await ready();
    const pages = Array.from({ length: MAX_PAGES + 1 }, () => named());
    cachedPage(named(), 0, read({ big: true }, MAX_TEXT)); // (everything else dropped)
    for (const [i, name] of pages.slice(0, MAX_PAGES).entries()) cachedPage(name, 0, read({ i }, 0));
    expect(keptPages()).toEqual({ pages: MAX_PAGES, text: 0 });
    expect(cachedPage(pages[0]!, 0, kept)).toEqual({ i: 0 });
    cachedPage(pages[MAX_PAGES]!, 0, read({ i: MAX_PAGES }, 0));
    expect(keptPages().pages).toBe(MAX_PAGES);
    expect(cachedPage(pages[1]!, 0, kept)).toEqual({ i: 1 });
    expect(cachedPage(pages[MAX_PAGES]!, 0, kept)).toEqual({ i: MAX_PAGES });
    expect(cachedPage(pages[0]!, 0, read({ gone: 0 }, 0))).toEqual({ gone: 0 });
  });

  it("nothing with TOKEN_CACHE_SIZE=0", async () => {
    await ready();
    const previous = setEnvForTests({ tokenCacheSize: 0 });
    try {
      const name = named();
      const [first, second] = [{ first: true }, { second: true }];
      const hits = pageCacheHits.count;
      expect(cachedPage(name, 0, read(first, 1))).toBe(first);
      expect(cachedPage(name, 0, read(second, 1))).toBe(second);
      expect(pageCacheHits.count).toBe(hits);
    } finally {
      setEnvForTests(previous);
    }
  });

  it.skipIf(!onPostgres)("on PostgreSQL, nothing is answered while the lease is not fresh", async () => {
    await ready();
    const name = named();
    const [first, second] = [{ first: true }, { second: true }];
    expect(cachedPage(name, 0, read(first, 1))).toBe(first);
    expect(cachedPage(name, 0, kept)).toBe(first);
    heldAt += STALENESS_MS; // the newest heartbeat is now too old
    expect(cachedPage(name, 0, read(second, 1))).toBe(second);
  });

  it.skipIf(!onPostgres)("on PostgreSQL, a page notification and a token notification after it leave nothing kept before them", async () => {
    await ready();
    const cache = (connectedDriver() as { tokenCache: PgTokenCache }).tokenCache;
    const name = named();
    const [first, second] = [{ first: true }, { second: true }];
    expect(cachedPage(name, 0, read(first, 1))).toBe(first);
    expect(cachedPage(name, 0, kept)).toBe(first);
    const generation = cache.generation;
    await (await db()).$executeRawUnsafe(`SELECT pg_notify('page_cache', ''), pg_notify('token_cache', '')`);
    await until(() => cache.generation !== generation, () => "the token notification, after the page one");
    await ready();
    expect(cachedPage(name, 0, read(second, 1))).toBe(second);
  });
});

describe("a new connection or cache starts over", () => {
  it.skipIf(!onPostgres)("on PostgreSQL, a connection made with TOKEN_CACHE_SIZE=0 has no cache to keep pages under, whatever the setting says later", async () => {
    await disconnectDb();
    const previous = setEnvForTests({ tokenCacheSize: 0 });
    try {
      await db();
    } finally {
      setEnvForTests(previous);
    }
    try {
      expect((connectedDriver() as { tokenCache: unknown }).tokenCache).toBeNull();
      const name = named();
      const [first, second] = [{ first: true }, { second: true }];
      expect(cachedPage(name, 0, read(first, 1))).toBe(first);
      expect(cachedPage(name, 0, read(second, 1))).toBe(second);
    } finally {
      await disconnectDb();
      await ready();
    }
  });

  it.skipIf(!onPostgres)("on PostgreSQL, a page read while the database was disconnected is answered and not kept", async () => {
    await ready();
    const name = named();
    const value = { readAcrossADisconnection: true };
    const answer = cachedPage(name, 0, async () => {
      await disconnectDb();
      return { value, size: 1, validUntilMs: Number.POSITIVE_INFINITY };
    });
    const before = keptPages(); // (as the read began)
    expect(await answer).toBe(value);
    expect(keptPages()).toEqual(before);
    await ready();
  });

  it("a page kept under the previous one is not answered, even where its count has come back to the same number", async () => {
    await ready();
    const name = named();
    const [old, current] = [{ old: true }, { current: true }];
    const stampOf = (): number => {
      const d = connectedDriver()!;
      return d.kind === "sqlite" ? readerVersion(d.reader()) : d.tokenCache!.pageGeneration;
    };
    expect(cachedPage(name, 0, read(old, 1))).toBe(old);
    const stamp = stampOf();
    expect(cachedPage(name, 0, kept)).toBe(old);
    await disconnectDb();
    // Not connected: nothing is answered from the cache, nothing kept.
    const unconnected = { unconnected: true };
    expect(cachedPage(name, 0, read(unconnected, 1))).toBe(unconnected);
    await ready();
    // The new reader (SQLite) or cache (PostgreSQL) counts from the start: bring its count to the old one's.
    for (let i = 0; i < 500 && stampOf() < stamp; i++) {
      const d = connectedDriver()!;
      const before = stampOf();
      if (d.kind === "sqlite") await makeUser();
      else await (await db()).$executeRawUnsafe(`NOTIFY "page_cache"`);
      await until(() => stampOf() !== before, () => "the count moved");
    }
    // (Past it only when another test file running beside this one committed meanwhile: nothing to show then.)
    if (stampOf() !== stamp) return;
    expect(cachedPage(name, 0, read(current, 1))).toBe(current);
  });
});
