// The collection-page cache (docs/design.md#the-page-cache): a page of the bundle, bundle permission and
// permission request collections, as answered (src/db/collection-sql.ts read it, the domain represented it),
// is kept by this process and answered again while nothing it was made from can have changed, on any instance.
// A page of 20 requests costs about ten bearer reads of CPU to read and represent; answered from here it
// costs about one.
//
// When a kept page may be answered, by the same rule as the validated-token cache:
// - SQLite: while the reader's data_version is the one the page was read under (src/db/fast-sql.ts
//   readerVersion(): asked once per synchronous run, before any statement of it). Any commit to the file,
//   by this process or another, changes it and empties the cache at the next run. So a page is never
//   answered to a request that arrived after a commit, whatever the commit changed.
// - PostgreSQL: under the token cache's lease (src/db/pg-token-cache.ts): a change to a bundle, a bundle
//   permission, a permission request or a user's name or e-mail notifies every instance, which empties its
//   page cache, and the writing transaction's completion is held back until no instance can still answer
//   from its cache; an instance answers from it only while its newest heartbeat is recent. A page read
//   while the cache was being emptied is not kept (the generation it began in has passed).
// - and on both, only until `validUntilMs` (the domain's: a pending request's page stops at the request's
//   expiry, when its status becomes "expired"), on the one clock (src/clock.ts) the domain passed.
// At most MAX_PAGES pages and MAX_TEXT characters of JSON are kept, the oldest dropped first; with
// TOKEN_CACHE_SIZE=0 nothing is (the token cache and its lease are off).
import type BetterSqlite3 from "better-sqlite3";
import { env } from "@/env";
import { connectedDriver } from "@/db/client";
import { readerVersion } from "@/db/fast-sql";
import type { PgTokenCache } from "@/db/pg-token-cache";
import { pageCacheHits } from "@/observability/metrics";

type MaybePromise<T> = T | Promise<T>;

/** What the domain read: the value to answer, its JSON text's length, and until when it stays true. */
export type ReadPage<T> = { value: T; size: number; validUntilMs: number };

type Entry = { value: object; size: number; validUntilMs: number };

export const MAX_PAGES = 1_000;
export const MAX_TEXT = 4 * 1024 * 1024;

/** What a page is kept under: the SQLite reader's data_version, or the PostgreSQL cache's generation. */
// (A version or generation is a count of one connection or one cache object: a new reader connection, or a
// new cache after closePgTokenCache(), counts again from the start, so the stamp names its owner too.)
type Stamp = { kind: "sqlite"; reader: BetterSqlite3.Database; version: number } | { kind: "postgresql"; cache: PgTokenCache; generation: number };

// One per process, on globalThis like the database client (src/db/client.ts): the custom server loads a second
// copy of the modules beside Next's bundle.
type State = { pages: Map<string, Entry>; text: number; current: number | null; owner: object | null };
const holder = globalThis as typeof globalThis & { __appPageCache?: State };
/** The pages, their JSON's total length, and the stamp every kept page was read under (a new one empties). */
const state: State = (holder.__appPageCache ??= { pages: new Map(), text: 0, current: null, owner: null });
const pages = state.pages;

/** Makes `stamp` the one every kept page was read under, emptying the cache if it was another. */
function enter(stamp: Stamp): void {
  const owner = stamp.kind === "sqlite" ? stamp.reader : stamp.cache;
  const at = stamp.kind === "sqlite" ? stamp.version : stamp.generation;
  if (state.owner === owner && state.current === at) return;
  pages.clear();
  state.text = 0;
  state.owner = owner;
  state.current = at;
}

/** The stamp for a read starting now, or null: answer nothing from the cache, keep nothing. */
function stampNow(): Stamp | null {
  if (env().tokenCacheSize <= 0) return null;
  const d = connectedDriver();
  if (d === undefined) return null;
  if (d.kind === "sqlite") {
    const reader = d.reader();
    return { kind: "sqlite", reader, version: readerVersion(reader) };
  }
  const cache = d.tokenCache;
  if (cache === null || !cache.pagesFresh()) return null;
  // Stryker disable next-line StringLiteral: a stamp's kind is only ever asked whether it is "sqlite"
  return { kind: "postgresql", cache, generation: cache.pageGeneration };
}

/** Whether a read that began under `stamp` may still be kept: nothing was committed or notified since. */
function stillCurrent(stamp: Stamp): boolean {
  if (stamp.kind === "sqlite") return readerVersion(stamp.reader) === stamp.version;
  const d = connectedDriver();
  return (
    d?.kind === "postgresql" &&
    // Stryker disable next-line ConditionalExpression: a cache replaced since was closed, and closing a cache that listened (as one the stamp came from did) moved its pageGeneration
    d.tokenCache === stamp.cache &&
    stamp.cache.pageGeneration === stamp.generation
  );
}

function keep(name: string, entry: Entry, stamp: Stamp): void {
  if (entry.size > MAX_TEXT || !stillCurrent(stamp)) return;
  enter(stamp);
  const replaced = pages.get(name);
  if (replaced !== undefined) {
    pages.delete(name);
    state.text -= replaced.size;
  }
  while (pages.size >= MAX_PAGES || state.text + entry.size > MAX_TEXT) {
    const [oldest, dropped] = pages.entries().next().value!;
    pages.delete(oldest);
    state.text -= dropped.size;
  }
  pages.set(name, entry);
  state.text += entry.size;
}

/**
 * The page named `name` (everything it depends on: the collection, the viewer, the window, the path), from
 * the cache when it may be answered at `atMs`, else `read()` (kept when it may be). Synchronous when `read` is.
 */
export function cachedPage<T extends object>(name: string, atMs: number, read: () => MaybePromise<ReadPage<T>>): MaybePromise<T> {
  const stamp = stampNow();
  if (stamp !== null) {
    enter(stamp);
    const hit = pages.get(name);
    if (hit !== undefined && atMs < hit.validUntilMs) {
      pageCacheHits.count++;
      return hit.value as T;
    }
  }
  const found = read();
  const done = (page: ReadPage<T>): T => {
    if (stamp !== null) keep(name, { value: page.value, size: page.size, validUntilMs: page.validUntilMs }, stamp);
    return page.value;
  };
  return found instanceof Promise ? found.then(done) : done(found);
}

/** For tests: how many pages are kept. */
export const keptPages = () => ({ pages: pages.size, text: state.text });
