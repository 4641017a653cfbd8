// The Prisma client singleton: SQLite (better-sqlite3 adapter) by default, PostgreSQL when DATABASE_URL says
// so. Both generated clients come from one data model (prisma/sqlite/schema.prisma), so they share one type.
//
// It also hands the driver connection Prisma already holds to the few hot statements that skip Prisma
// (src/db/fast-sql.ts, docs/design.md): one connection per process on SQLite, one pool on PostgreSQL.
// - SQLite: Prisma's adapter queues its interactive transactions on one better-sqlite3 connection, and any
//   statement run on that connection while one is open runs inside it. So the adapter factory is wrapped:
//   every Prisma transaction also holds `sqliteLock` from BEGIN to COMMIT/ROLLBACK, and our own synchronous
//   transactions take the same lock (exclusive()). A second connection for writes would be worse: its busy
//   wait is synchronous and would block the event loop that Prisma's open transaction needs in order to
//   finish. Reads are different: in WAL mode a reader never waits for a writer (it reads the last commit), so
//   the bearer read runs on a connection of its own, opened on first use (reader(), query_only), and never
//   waits for, nor sees inside, a Prisma transaction.
// - PostgreSQL: one pg.Pool shared by Prisma (new PrismaPg(pool)) and our prepared statements. Each of its
//   connections holds back the end of a transaction that invalidated cached tokens (settleCommits(), the lease
//   of src/db/pg-token-cache.ts).
//
// Every wait on the database is bounded (docs/rules/operations.md#database-outages: a database that cannot
// answer is a 503 within 10 seconds, never a hang; src/db/errors.ts says which failures those are): on
// PostgreSQL a connection (or a place in the pool's queue) within CONNECT_TIMEOUT_MS, each statement within
// STATEMENT_TIMEOUT_MS on the server (statement_timeout, lock waits included) and QUERY_TIMEOUT_MS on the
// client (a connection that silently died), TCP keep-alive on every connection, and
// idle_in_transaction_session_timeout; on SQLite the busy timeout (5 s); for every Prisma transaction
// TRANSACTION_MAX_WAIT_MS to start (the pool, or on SQLite the connection's lock) and TRANSACTION_TIMEOUT_MS
// to finish. The pool drops connections that fail and makes new ones on demand, and a client whose first
// connection failed is made again on the next call, so the service recovers by itself when the database is
// back. The CLI (long maintenance statements) lifts the statement bounds with allowLongStatements().
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import Database from "better-sqlite3";
import type BetterSqlite3 from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import pg from "pg";
import { env } from "@/env";
import { log } from "@/observability/log";
import { closePgTokenCache, pgTokenCache, settleCommits, type PgTokenCache } from "@/db/pg-token-cache";
import { PrismaClient as PostgresClient } from "@/generated/postgresql/client";
import { Prisma, PrismaClient as SqliteClient } from "@/generated/sqlite/client";

export type Db = SqliteClient;
export type Tx = Prisma.TransactionClient;
export { Prisma };

export type Driver =
  | {
      kind: "sqlite";
      connection: BetterSqlite3.Database;
      /** A second, read-only connection to the same file, for reads that must not wait for Prisma's transactions. */
      reader: () => BetterSqlite3.Database;
      /** Runs `fn` (synchronous: nothing can interleave) while no Prisma transaction is open on the connection. */
      exclusive: <T>(fn: () => T) => Promise<T>;
      /**
       * For tests that line requests up at their claims (src/testing/race.ts): takes the transaction lock
       * without opening a transaction, so reads go on while every transaction queues; and how many queue.
       */
      hold: () => Promise<() => void>;
      queued: () => number;
    }
  | {
      kind: "postgresql";
      pool: pg.Pool;
      /** The validated-token cache and its lease (src/db/pg-token-cache.ts), or null with TOKEN_CACHE_SIZE=0. */
      tokenCache: PgTokenCache | null;
    };

type Holder = { client?: Db; ready?: Promise<Db>; driver?: Driver; pool?: pg.Pool; reader?: BetterSqlite3.Database; longStatements?: boolean; initialised?: boolean };

export const CONNECT_TIMEOUT_MS = 3_000;
export const STATEMENT_TIMEOUT_MS = 5_000;
export const QUERY_TIMEOUT_MS = 6_000;
export const TRANSACTION_MAX_WAIT_MS = 4_000;
export const TRANSACTION_TIMEOUT_MS = 8_000;
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 10_000;
// On globalThis: one per process, also for the second copy of this module that the custom server's route
// modules load beside Next's bundle.
const globalHolder = globalThis as typeof globalThis & { __appDb?: Holder };
const holder: Holder = (globalHolder.__appDb ??= {});

/** A FIFO mutex: acquire() resolves with the function that releases it. */
class Lock {
  private held = false;
  private readonly waiting: Array<() => void> = [];
  get locked(): boolean {
    return this.held;
  }
  get queued(): number {
    return this.waiting.length;
  }
  acquire(): Promise<() => void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => this.waiting.push(() => resolve(this.releaser())));
  }
  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      if (next) next(); // stays held, handed to the next in line
      else this.held = false;
    };
  }
}

type SqliteAdapter = Awaited<ReturnType<PrismaBetterSqlite3["connect"]>>;
type SqliteTransaction = Awaited<ReturnType<SqliteAdapter["startTransaction"]>>;

/** The better-sqlite3 factory, with every Prisma transaction also holding `lock` (see the file comment). */
function lockedSqliteFactory(inner: PrismaBetterSqlite3, lock: Lock, onConnect: (connection: BetterSqlite3.Database) => void): PrismaBetterSqlite3 {
  const connect = async (): Promise<SqliteAdapter> => {
    const adapter = await inner.connect();
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => {
      const release = await lock.acquire();
      let tx: SqliteTransaction;
      try {
        tx = await startTransaction(isolationLevel);
      } catch (error) {
        release();
        throw error;
      }
      const commit = tx.commit.bind(tx);
      const rollback = tx.rollback.bind(tx);
      tx.commit = () => commit().finally(release);
      tx.rollback = () => rollback().finally(release);
      return tx;
    };
    onConnect((adapter as unknown as { client: BetterSqlite3.Database }).client);
    return adapter;
  };
  const factory = { provider: inner.provider, adapterName: inner.adapterName, connect, connectToShadowDb: () => inner.connectToShadowDb() };
  return factory as unknown as PrismaBetterSqlite3;
}

function createClient(): { client: Db; init: (client: Db) => Promise<void> } {
  const { database } = env();
  if (database.kind === "postgresql") {
    const long = holder.longStatements === true;
    const pool = new pg.Pool({
      connectionString: database.url,
      max: 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: long ? 0 : STATEMENT_TIMEOUT_MS,
      query_timeout: long ? 0 : QUERY_TIMEOUT_MS,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      // The token cache's triggers tell the writing session by a notice (src/db/pg-token-cache.ts), which
      // a server or role configured to send fewer messages would withhold.
      options: "-c client_min_messages=notice",
    });
    // An idle connection that the server closes (PostgreSQL stopped or restarted) is an 'error' event on the
    // pool; unheard, it would end the process. The pool has already dropped that connection.
    pool.on("error", (error) => log.warn("database connection lost", { error: error.message }));
    holder.pool = pool;
    const tokenCache = pgTokenCache(CONNECT_TIMEOUT_MS);
    // Every change a cached token depends on completes only once no instance can still answer from it.
    if (tokenCache) pool.on("connect", (connection) => settleCommits(connection));
    holder.driver = { kind: "postgresql", pool, tokenCache };
    // The PostgreSQL client is generated from the same model; only its provider literal differs.
    // (The adapter's copy of @types/pg differs from ours; at run time both are the one `pg`, which its
    // `instanceof pg.Pool` check needs.)
    const adapter = new PrismaPg(pool as unknown as ConstructorParameters<typeof PrismaPg>[0]);
    const client = new PostgresClient({ adapter }) as unknown as Db;
    return { client, init: async () => {} };
  }
  mkdirSync(dirname(database.file), { recursive: true });
  const lock = new Lock();
  const adapter = lockedSqliteFactory(new PrismaBetterSqlite3({ url: database.file, timeout: 5000 }), lock, (connection) => {
    holder.driver = {
      kind: "sqlite",
      connection,
      reader: () => (holder.reader ??= openReader(database.file)),
      exclusive: async (fn) => {
        const release = await lock.acquire();
        try {
          return fn();
        } finally {
          release();
        }
      },
      hold: () => lock.acquire(),
      queued: () => lock.queued,
    };
  });
  const client = new SqliteClient({ adapter });
  return {
    client,
    // WAL and NORMAL sync make claim-first writes race-free and fast. temp_store MEMORY keeps a savepoint's
    // journal in memory: each grouped write of src/db/fast-sql.ts is a savepoint, whose journal SQLite would
    // otherwise move to a new temporary file past 64 KiB (docs/design.md#the-data-layer).
    // One statement per call.
    init: async (c) => {
      await c.$queryRawUnsafe("PRAGMA journal_mode = WAL");
      await c.$executeRawUnsafe("PRAGMA synchronous = NORMAL");
      await c.$executeRawUnsafe("PRAGMA foreign_keys = ON");
      await c.$executeRawUnsafe("PRAGMA temp_store = MEMORY");
    },
  };
}

/** A connection that only reads (the main one has set WAL mode, which the file keeps). */
function openReader(file: string): BetterSqlite3.Database {
  const reader = new Database(file, { timeout: 5000 });
  reader.pragma("query_only = ON");
  return reader;
}

/** The database client, initialised once per process. */
export function db(): Promise<Db> {
  if (!holder.ready) {
    const { client, init } = createClient();
    holder.client = client;
    holder.ready = init(client).then(() => {
      holder.initialised = true;
      return client;
    });
    holder.ready.catch(() => {
      holder.ready = undefined;
    });
  }
  return holder.ready;
}

/** The driver connection under the Prisma client (for src/db/fast-sql.ts only). */
export async function driver(): Promise<Driver> {
  await db();
  if (!holder.driver) throw new Error("the database driver is not connected");
  return holder.driver;
}

/** The driver without waiting, once db() has initialised and connected it; else undefined (use driver()). */
export function connectedDriver(): Driver | undefined {
  return holder.initialised ? holder.driver : undefined;
}

/**
 * Every write goes through a transaction (on SQLite a bare write issued while another request's interactive
 * transaction is open would run inside it). Keep `fn` short and free of anything but database calls; when it
 * claims a single-use row, the conditional update must be its first statement.
 */
export async function write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await db();
  return client.$transaction(fn, { maxWait: TRANSACTION_MAX_WAIT_MS, timeout: holder.longStatements ? 120_000 : TRANSACTION_TIMEOUT_MS });
}

/** For the CLI, before its first query: maintenance statements (tokens:prune) may run longer than requests'. */
export function allowLongStatements(): void {
  holder.longStatements = true;
}

export async function disconnectDb(): Promise<void> {
  const { client, pool, reader } = holder;
  holder.reader = undefined;
  reader?.close();
  holder.client = undefined;
  holder.ready = undefined;
  holder.initialised = false;
  holder.driver = undefined;
  holder.pool = undefined;
  await client?.$disconnect();
  await pool?.end();
  await closePgTokenCache();
}
