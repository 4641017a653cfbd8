// The Prisma client singleton: SQLite (better-sqlite3 adapter) by default, PostgreSQL when DATABASE_URL says
// so. Both generated clients come from one data model (prisma/sqlite/schema.prisma), so they share one type.
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { env } from "@/env";
import { PrismaClient as PostgresClient } from "@/generated/postgresql/client";
import { Prisma, PrismaClient as SqliteClient } from "@/generated/sqlite/client";

export type Db = SqliteClient;
export type Tx = Prisma.TransactionClient;
export { Prisma };

type Holder = { client?: Db; ready?: Promise<Db> };
const globalHolder = globalThis as typeof globalThis & { __appDb?: Holder };
const holder: Holder = (globalHolder.__appDb ??= {});

function createClient(): { client: Db; init: (client: Db) => Promise<void> } {
  const { database } = env();
  if (database.kind === "postgresql") {
    const adapter = new PrismaPg({ connectionString: database.url, max: 10 });
    // The PostgreSQL client is generated from the same model; only its provider literal differs.
    const client = new PostgresClient({ adapter }) as unknown as Db;
    return { client, init: async () => {} };
  }
  mkdirSync(dirname(database.file), { recursive: true });
  const adapter = new PrismaBetterSqlite3({ url: database.file, timeout: 5000 });
  const client = new SqliteClient({ adapter });
  return {
    client,
    // STACK.md: WAL and NORMAL sync make claim-first writes race-free and fast. One statement per call.
    init: async (c) => {
      await c.$queryRawUnsafe("PRAGMA journal_mode = WAL");
      await c.$executeRawUnsafe("PRAGMA synchronous = NORMAL");
      await c.$executeRawUnsafe("PRAGMA foreign_keys = ON");
    },
  };
}

/** The database client, initialised once per process. */
export function db(): Promise<Db> {
  if (!holder.ready) {
    const { client, init } = createClient();
    holder.client = client;
    holder.ready = init(client).then(() => client);
    holder.ready.catch(() => {
      holder.ready = undefined;
    });
  }
  return holder.ready;
}

/**
 * Every write goes through a transaction (STACK.md: on SQLite a bare write issued while another request's
 * interactive transaction is open would run inside it). Keep `fn` short and free of anything but database
 * calls; when it claims a single-use row, the conditional update must be its first statement.
 */
export async function write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await db();
  return client.$transaction(fn, { maxWait: 10_000, timeout: 15_000 });
}

export async function disconnectDb(): Promise<void> {
  const client = holder.client;
  holder.client = undefined;
  holder.ready = undefined;
  await client?.$disconnect();
}
