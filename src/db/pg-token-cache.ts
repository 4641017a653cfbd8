// The validated-token cache on PostgreSQL (docs/design.md: a token deleted or revoked on any instance is
// refused by every instance on its next request). SQLite's cache asks data_version (src/db/fast-sql.ts);
// an instance on PostgreSQL cannot learn of another's commit without a round trip, which is the cost the cache
// saves. So the instances keep a lease on their caches instead, bounded by time:
//
// 1. Every commit that could make a cached answer wrong tells every instance: triggers on "AccessToken" (any
//    change or deletion, which a grant's, client's or user's deletion cascades to), "Grant" (its revocation),
//    "User" (its name or e-mail) and "Client" (its first-party flag), and TRUNCATE of any of them, call
//    pg_notify(INVALIDATION_CHANNEL) in the writing transaction (prisma/postgresql/migrations/
//    20261124000000_token_cache). PostgreSQL delivers it at commit, to every listening session, in commit
//    order with every other notification. Each instance listens on a connection of its own and empties its
//    cache when it arrives.
// 2. While its cache is in use, each instance sends itself a heartbeat through the same queue every
//    HEARTBEAT_MS, on a channel of its own, carrying the (monotonic) time it was sent. Receiving a heartbeat
//    sent at time s proves that every invalidation committed before s has been received and applied: the
//    heartbeat committed after s, and notifications arrive in commit order. An instance answers from its cache
//    only while its newest heartbeat was sent less than STALENESS_MS ago; otherwise (a slow or lost listening
//    connection, a stalled process, a cold start) it asks the database, as without the cache.
// 3. The same triggers raise INVALIDATION_NOTICE to the writing session itself, before its statement
//    completes. The pool (db.ts) holds back the completion of a transaction that raised it for STALENESS_MS
//    after its commit (settleCommits()), so no caller, and no client of ours, learns that the change is done
//    before that time has passed. A request that reaches any instance after that finds the instance's newest
//    heartbeat sent after the commit (so the invalidation already applied) or too old (so no cache). This is a
//    lease: it assumes only that the machines' clocks run at the same rate over STALENESS_MS.
//
// The price: a change that invalidates (a revocation, a rename, a grant's withdrawal) answers STALENESS_MS
// later; token issuance, refresh rotation (which touch neither those columns nor rows) and reads do not wait.
// A change made outside the service (psql) is seen by every instance within STALENESS_MS. TOKEN_CACHE_SIZE=0
// turns the cache off and with it the listening connection and the wait; set it alike on every instance.
//
// The same lease covers the collection-page cache (src/db/page-cache.ts): triggers on "Bundle",
// "BundlePermission" and "PermissionRequest" notify PAGE_CHANNEL and raise PAGE_NOTICE
// (prisma/postgresql/migrations/20261127180000_page_cache); a notification there empties the pages only
// (pageGeneration), and the commit is held back as for a token's change. Every emptying of the token cache
// (a user's name or e-mail among its causes) empties the pages too.
//
// The same lease covers registered clients' rows (getClient/putClient: the first read of every token,
// revocation and introspection request, src/db/fast-sql.ts clientByClientId): any change or deletion of a
// client's row, other than a metadata document's (src/client-metadata-documents, never read from here),
// notifies INVALIDATION_CHANNEL (prisma/postgresql/migrations/20261128000000_client_cache), which empties
// tokens, clients and pages alike. So a secret rotated, a redirect URI or scope changed, a client deleted, on
// any instance, is in every instance's answer to a request that arrives after the change was answered.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { env } from "@/env";
import { log } from "@/observability/log";
import type { BearerToken } from "@/db/bearer-token";
import type { Client } from "@/generated/sqlite/client";

export const INVALIDATION_CHANNEL = "token_cache";
export const INVALIDATION_NOTICE = "token_cache: invalidated";
export const PAGE_CHANNEL = "page_cache";
export const PAGE_NOTICE = "page_cache: invalidated";
/** How old the newest heartbeat may be for a cache hit; and how long an invalidating commit is held back. */
export const STALENESS_MS = 40;
/** At most this many client rows are kept (TOKEN_CACHE_SIZE permitting): the clients in use at once. */
const CLIENT_ROWS = 1_000;
const HEARTBEAT_MS = 20;
/** The heartbeats stop when no bearer read asked for this long (the next read asks the database). */
const IDLE_AFTER_MS = 2_000;
/** A heartbeat not back after this long: the listening connection is dropped and made again. */
const LOST_AFTER_MS = 5_000;
const RETRY_AFTER_MS = 1_000;

type Entry = { token: BearerToken; expiresAtMs: number };

export class PgTokenCache {
  private readonly tokens = new Map<string, Entry>();
  /** Registered clients' rows by client_id (never a metadata document's: see above). */
  private readonly clients = new Map<string, Readonly<Client>>();
  /** Bumped whenever the cache is emptied: a lookup that began before then must not fill it. */
  private generationCount = 0;
  /** The same for the collection-page cache: bumped with every emptying of either. */
  private pageGenerationCount = 0;
  private listener: pg.Client | null = null;
  private connecting = false;
  private retryAt = 0;
  private readonly heartbeatChannel = `token_cache_hb_${randomBytes(8).toString("hex")}`;
  /** performance.now() when the newest heartbeat received was sent. */
  private horizon = -Infinity;
  private heartbeatSentAt: number | null = null;
  /** A heartbeat's statement has not ended yet. */
  private querying = false;
  // Stryker disable next-line UnaryOperator: the read that starts the heartbeats sets it before any beat reads it
  private lastUse = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly connectionString: string,
    private readonly size: number,
    private readonly connectTimeoutMs: number,
  ) {}

  /** The generation a lookup starts in; pass it to put(). */
  get generation(): number {
    return this.generationCount;
  }

  /** Whether a hit may be answered now: the newest heartbeat proves every earlier invalidation applied. */
  get fresh(): boolean {
    return performance.now() - this.horizon < STALENESS_MS;
  }

  /** The generation of the collection-page cache: a page is kept and answered only within one. */
  get pageGeneration(): number {
    return this.pageGenerationCount;
  }

  /** Whether a kept page may be answered now (the lease, as for a token); starts the heartbeats if needed. */
  pagesFresh(): boolean {
    return this.inUse();
  }

  /** A read of any kind: keeps (or starts) the heartbeats, and answers whether the lease holds now. */
  private inUse(): boolean {
    const now = performance.now();
    this.lastUse = now;
    if (this.timer === null) this.start();
    return now - this.horizon < STALENESS_MS;
  }

  /** The cached live token for `digest` at `atMs`, or undefined: ask the database. */
  get(digest: string, atMs: number): BearerToken | undefined {
    if (!this.inUse()) return undefined;
    const entry = this.tokens.get(digest);
    return entry !== undefined && entry.expiresAtMs > atMs ? entry.token : undefined;
  }

  /** Keeps a live token the database answered, unless the cache was emptied since the lookup began. */
  put(digest: string, token: BearerToken, expiresAtMs: number, generation: number): void {
    if (generation !== this.generationCount || this.size <= 0) return;
    if (this.tokens.size >= this.size) this.tokens.delete(this.tokens.keys().next().value!);
    this.tokens.set(digest, { token, expiresAtMs });
  }

  /** The cached row of the registered client `clientId`, or undefined: ask the database. */
  getClient(clientId: string): Readonly<Client> | undefined {
    return this.inUse() ? this.clients.get(clientId) : undefined;
  }

  /** Keeps a registered client's row the database answered, unless the cache was emptied since the lookup began. */
  putClient(client: Client, generation: number): void {
    if (generation !== this.generationCount || this.size <= 0 || client.metadataDocumentExpiresAt !== null) return;
    if (this.clients.size >= Math.min(this.size, CLIENT_ROWS)) this.clients.delete(this.clients.keys().next().value!);
    this.clients.set(client.clientId, Object.freeze({ ...client }));
  }

  /** Stops the heartbeats and closes the listening connection (shutdown, tests). */
  async close(): Promise<void> {
    this.closed = true;
    this.stop();
    const listener = this.listener;
    this.drop(listener);
    await listener?.end().catch(() => {});
  }

  private clear(): void {
    this.tokens.clear();
    this.clients.clear();
    // Stryker disable next-line UpdateOperator: any change of the count makes a lookup that began before it stale
    this.generationCount++;
    this.pageGenerationCount++;
  }

  private start(): void {
    if (this.closed) return;
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.timer.unref();
    this.beat();
  }

  // Stopping saves only the timer's wake-ups: a beat of an idle cache returns before it sends anything, and one
  // of a closed cache asks connect(), which refuses it; a read of a cache whose timer still runs has no start
  // to wait for. So no answer differs with the timer left running:
  // Stryker disable next-line BlockStatement: see above
  private stop(): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: see above
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private beat(): void {
    const now = performance.now();
    if (now - this.lastUse > IDLE_AFTER_MS) return this.stop();
    const listener = this.listener;
    if (listener === null) return this.connect();
    if (this.heartbeatSentAt !== null) {
      if (now - this.heartbeatSentAt > LOST_AFTER_MS) {
        // Stryker disable next-line StringLiteral: log-only message
        log.warn("the token cache's listening connection stopped answering; making it again");
        this.drop(listener);
        listener.end().catch(() => {});
      }
      return; // one heartbeat at a time
    }
    if (this.querying) return; // (its own notification can arrive before the statement's end)
    this.heartbeatSentAt = now;
    // Stryker disable next-line BooleanLiteral: without the flag a second NOTIFY only queues behind the first on the connection, and heartbeats arrive in order either way
    this.querying = true;
    // NOTIFY by the simple protocol costs this process about two thirds of a parameterised pg_notify() (67-108
    // against 105-170 µs a heartbeat, as measured); the channel is our own hex name and the payload a
    // number, so nothing from outside is quoted.
    listener.query(`NOTIFY "${this.heartbeatChannel}", '${now}'`).then(
      () => (this.querying = false),
      (error: unknown) => {
        this.querying = false;
        // Stryker disable next-line StringLiteral,ObjectLiteral: log-only message and detail
        log.warn("the token cache's heartbeat failed", { error: String(error) });
        this.drop(listener);
        listener.end().catch(() => {});
      },
    );
  }

  private connect(): void {
    if (this.connecting || this.closed || performance.now() < this.retryAt) return;
    this.connecting = true;
    const client = new pg.Client({ connectionString: this.connectionString, connectionTimeoutMillis: this.connectTimeoutMs, keepAlive: true, keepAliveInitialDelayMillis: 5_000 });
    client.on("notification", (message) => this.notified(client, message));
    // pg 8.23 emits "error" and then "end" whenever the server or the network ends a connection, and either
    // drops it; we end it ourselves only once it is dropped. So each of the two handlers alone is enough:
    // Stryker disable next-line BlockStatement: the "end" handler drops it too
    client.on("error", (error) => {
      // Stryker disable next-line StringLiteral,ObjectLiteral: log-only message and detail
      log.warn("the token cache's listening connection failed", { error: error.message });
      this.drop(client);
    });
    // Stryker disable next-line StringLiteral,ArrowFunction: the "error" handler drops it first
    client.on("end", () => this.drop(client));
    void (async () => {
      try {
        await client.connect();
        await client.query(`LISTEN "${INVALIDATION_CHANNEL}"`);
        await client.query(`LISTEN "${PAGE_CHANNEL}"`);
        await client.query(`LISTEN "${this.heartbeatChannel}"`);
        (client as unknown as { unref(): void }).unref(); // never what keeps the process alive (pg 8.23; untyped)
        // Stryker disable next-line StringLiteral: the message is never logged (a closed cache logs nothing)
        if (this.closed) throw new Error("closed");
        this.clear(); // whatever was read before we listened may be stale
        this.listener = client;
      } catch (error) {
        // Stryker disable next-line ConditionalExpression,BooleanLiteral,StringLiteral,ObjectLiteral: only whether and what it logs
        if (!this.closed) log.warn("the token cache could not listen for invalidations", { error: String(error) });
        this.retryAt = performance.now() + RETRY_AFTER_MS;
        client.end().catch(() => {});
      } finally {
        this.connecting = false;
      }
    })();
  }

  /**
   * For tests: a listener that lags behind the database. Notifications queue, unapplied, until the returned
   * function applies them in order.
   */
  hold(): (() => void) & { heartbeatsSentAt(): number[] } {
    // Stryker disable next-line ArrayDeclaration: an extra element (a string) is handed to notified() as a client that is never the listener, and heartbeatsSentAt() finds no heartbeat in it
    const held: Array<[pg.Client, pg.Notification]> = (this.held ??= []);
    const release = () => {
      if (this.held !== held) return;
      this.held = null;
      for (const [client, message] of held) this.notified(client, message);
    };
    /** When the heartbeats queued so far were sent. */
    const heartbeatsSentAt = () => held.filter(([, message]) => message.channel === this.heartbeatChannel).map(([, message]) => Number(message.payload));
    return Object.assign(release, { heartbeatsSentAt });
  }
  private held: Array<[pg.Client, pg.Notification]> | null = null;

  private notified(client: pg.Client, message: pg.Notification): void {
    if (this.held !== null) return void this.held.push([client, message]);
    if (client !== this.listener) return;
    if (message.channel === INVALIDATION_CHANNEL) return this.clear();
    if (message.channel === PAGE_CHANNEL) return void this.pageGenerationCount++;
    if (message.channel !== this.heartbeatChannel) return;
    const sentAt = Number(message.payload);
    if (sentAt > this.horizon) this.horizon = sentAt;
    // Stryker disable next-line LogicalOperator: one heartbeat is out at a time and they arrive in order, so the one that arrives is the one out
    if (this.heartbeatSentAt !== null && sentAt >= this.heartbeatSentAt) this.heartbeatSentAt = null;
  }

  /** Forgets a listening connection that failed: no hit until a new one has heard a heartbeat. */
  private drop(client: pg.Client | null): void {
    if (client === null || client !== this.listener) return;
    this.listener = null;
    this.horizon = -Infinity;
    this.heartbeatSentAt = null;
    this.querying = false;
    this.retryAt = performance.now() + RETRY_AFTER_MS;
    this.clear();
  }
}

const waitStaleness = () => new Promise<void>((resolve) => setTimeout(resolve, STALENESS_MS));
let commitHold: () => Promise<void> = waitStaleness;

/**
 * For tests: what holds back an invalidating commit's completion instead of the STALENESS_MS wait (null: the
 * wait again), so that a test can see the order of the commit, the hold and the completion without timing it.
 */
export function holdCommitsWith(hold: (() => Promise<void>) | null): void {
  commitHold = hold ?? waitStaleness;
}

/**
 * Holds back the completion of every statement on `client` that ends a transaction which raised
 * INVALIDATION_NOTICE or PAGE_NOTICE (a committed change a cached token or page may depend on) for
 * STALENESS_MS: rule 3 above.
 * Covers the three ways the pool's clients are called: a promise (Prisma's adapter), a callback (pg.Pool's
 * query(), src/db/fast-sql.ts) and a callback in the query's config.
 */
export function settleCommits(client: pg.ClientBase): void {
  let invalidated = false;
  // pg 8.23's getTransactionStatus(): the status of its last ReadyForQuery, "I" outside a transaction (untyped).
  const status = () => (client as unknown as { getTransactionStatus(): string | null }).getTransactionStatus();
  client.on("notice", (notice) => {
    if (notice.message === INVALIDATION_NOTICE || notice.message === PAGE_NOTICE) invalidated = true;
  });
  /** After a statement: the wait, when it ended (committed) a transaction that invalidated; else null. */
  const settle = (failed: boolean): Promise<void> | null => {
    if (!invalidated || status() !== "I") return null;
    invalidated = false;
    return failed ? null : commitHold();
  };
  const after = <A extends unknown[]>(callback: (error: unknown, ...rest: A) => void) =>
    function (this: unknown, error: unknown, ...rest: A) {
      const wait = settle(error !== null && error !== undefined);
      if (wait === null) return callback.call(this, error, ...rest);
      void wait.then(() => callback.call(this, error, ...rest));
    };
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const last = args.length - 1;
    if (typeof args[last] === "function") {
      args[last] = after(args[last] as (error: unknown) => void);
      return query(...args);
    }
    const config = args[0] as { callback?: unknown } | null;
    if (config !== null && typeof config === "object" && typeof config.callback === "function") {
      config.callback = after(config.callback as (error: unknown) => void);
      return query(...args);
    }
    const result = query(...args);
    if (!(result instanceof Promise)) return result; // a Submittable (a cursor, a stream): never ours
    return result.then(
      async (value: unknown) => {
        await settle(false);
        return value;
      },
      (error: unknown) => {
        settle(true);
        throw error;
      },
    );
  };
}

// One per process, on globalThis like the database client (db.ts): the custom server loads a second copy of
// the modules beside Next's bundle.
const globalHolder = globalThis as typeof globalThis & { __appPgTokenCache?: PgTokenCache | null };

/** This process's cache, when the database is PostgreSQL and TOKEN_CACHE_SIZE is not 0; else null. */
export function pgTokenCache(connectTimeoutMs: number): PgTokenCache | null {
  if (globalHolder.__appPgTokenCache !== undefined) return globalHolder.__appPgTokenCache;
  const { database, tokenCacheSize } = env();
  globalHolder.__appPgTokenCache = database.kind === "postgresql" && tokenCacheSize > 0 ? new PgTokenCache(database.url, tokenCacheSize, connectTimeoutMs) : null;
  return globalHolder.__appPgTokenCache;
}

/** Closes this process's cache, if any (disconnectDb()); the next pgTokenCache() makes a new one. */
export async function closePgTokenCache(): Promise<void> {
  const cache = globalHolder.__appPgTokenCache;
  globalHolder.__appPgTokenCache = undefined;
  await cache?.close();
}
