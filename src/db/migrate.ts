// The migration runner (`prisma migrate` needs Prisma's native schema-engine binary, which this project does
// not download: see scripts/prisma-generate.mjs). Migrations are SQL files in Prisma's layout, one folder per
// database: prisma/<kind>/migrations/<timestamp>_<name>/migration.sql. Each file is applied in its own
// transaction and recorded with its SHA-256; start-up is refused if a file that was applied has changed since,
// or has disappeared. The one exception is REWORDED below: comments of a migration that was already applied
// somewhere may be reworded, never its statements.
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import pg from "pg";
import { env, type Env } from "@/env";

export class MigrationError extends Error {
  override name = "MigrationError";
}

type Migration = { name: string; sql: string; checksum: string };
type Applied = { name: string; checksum: string };

export function migrationsDir(kind: Env["database"]["kind"]): string {
  return resolve("prisma", kind, "migrations");
}

export function readMigrations(dir: string): Migration[] {
  if (!existsSync(dir)) throw new MigrationError(`no migrations folder at ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, "migration.sql")))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/**
 * Migrations whose comments were reworded after they were applied (so that they cite the project's docs, not
 * notes it does not hold): the checksum of each earlier text, which a database may have recorded, and the
 * checksum of that text's statements (every line but comment lines). The earlier checksum is accepted only
 * while the file's statements are still exactly those, so a changed statement is refused as before.
 */
export const REWORDED: Readonly<Record<string, readonly { applied: string; statements: string }[]>> = {
  "20261123050000_registration_par_dpop": [
    { applied: "9b87596946977463f3decb4d86056875761bd2279ac6fe0c5593c3c12e25aeb1", statements: "0ed8082681cf34a3b7578d835c67aa0b874cf8efa6515becfaefc65f2ce13ef1" },
    { applied: "49894fc062454e3698190875a54b64ebf9b698ce53839e55a34047798de9ff46", statements: "19a74e54bfe62c272f9fd1b5d0342e106f75307d0033a4024c9bfce7cc74ce55" },
  ],
  "20261124000000_token_cache": [
    { applied: "880078a62e60fc504efd015d3a40b9ffee02f4beb2651b74131fb5d46b4888bc", statements: "b4e0497804e46e0a0b0b8c31975b062152d551bac49c3c2e80932567b4085dcd" },
    { applied: "1bfcc128af7ef71157adb3d9d541ba8e8c20d578736931903bfbae3fef973ea2", statements: "ae0eb7990c4a64a4da0182e8ae1850e2ca216479db4e1eed7491f3ff930f28d3" },
  ],
  "20261127000100_limiter": [
    { applied: "4baa3a456dbef31c89b718edfc396d44cfb30653bd6fde868e5e0fb95354e4d6", statements: "40b582d99418bbaa73fd70760fd7ab9f1ebcf54278a7b6ad4a44cc827706b6c5" },
  ],
};

/** SHA-256 of a migration's statements: every line but whole-line `--` comments. */
export function statementsChecksum(sql: string): string {
  const statements = sql.split("\n").filter((line) => !/^\s*--/.test(line)).join("\n");
  return createHash("sha256").update(statements).digest("hex");
}

/** Whether a recorded checksum is an earlier wording of this file, with the same statements. */
function rewordedFrom(file: Migration, recorded: string): boolean {
  const earlier = REWORDED[file.name]?.find((entry) => entry.applied === recorded);
  return earlier !== undefined && earlier.statements === statementsChecksum(file.sql);
}

/** Which migrations are pending; throws when the applied history does not match the files. */
export function plan(files: Migration[], applied: Applied[]): Migration[] {
  const byName = new Map(files.map((file) => [file.name, file]));
  for (const row of applied) {
    const file = byName.get(row.name);
    if (!file) throw new MigrationError(`migration ${row.name} was applied to this database but its file is missing`);
    if (file.checksum !== row.checksum && !rewordedFrom(file, row.checksum)) {
      throw new MigrationError(`migration ${row.name} has changed since it was applied; add a new migration instead`);
    }
  }
  const done = new Set(applied.map((row) => row.name));
  return files.filter((file) => !done.has(file.name));
}

const HISTORY_TABLE = `CREATE TABLE IF NOT EXISTS "_app_migrations" (
  "name" TEXT NOT NULL PRIMARY KEY,
  "checksum" TEXT NOT NULL,
  "applied_at" TEXT NOT NULL
)`;

function migrateSqlite(file: string, migrations: Migration[]): string[] {
  mkdirSync(dirname(file), { recursive: true });
  const sqlite = new Database(file, { timeout: 5000 });
  try {
    sqlite.pragma("journal_mode = WAL");
    // Foreign keys off while migrating (it cannot change inside a transaction), checked before the commit:
    // SQLite's documented procedure for changes ALTER TABLE cannot make, so that rebuilding a table
    // (CREATE new, copy, DROP old, RENAME) never cascades a delete into the rows that refer to it.
    sqlite.pragma("foreign_keys = OFF");
    sqlite.exec(HISTORY_TABLE);
    const appliedNames: string[] = [];
    // BEGIN IMMEDIATE takes the write lock, so two starting instances apply each file once.
    sqlite.exec("BEGIN IMMEDIATE");
    try {
      const applied = sqlite.prepare(`SELECT name, checksum FROM "_app_migrations"`).all() as Applied[];
      for (const migration of plan(migrations, applied)) {
        sqlite.exec(migration.sql);
        sqlite
          .prepare(`INSERT INTO "_app_migrations" (name, checksum, applied_at) VALUES (?, ?, ?)`)
          .run(migration.name, migration.checksum, new Date().toISOString());
        appliedNames.push(migration.name);
      }
      const broken = sqlite.prepare("PRAGMA foreign_key_check").all();
      if (broken.length > 0) throw new MigrationError(`migrations left ${broken.length} rows whose foreign keys point nowhere`);
      sqlite.exec("COMMIT");
    } catch (error) {
      sqlite.exec("ROLLBACK");
      throw error;
    }
    return appliedNames;
  } finally {
    sqlite.close();
  }
}

async function migratePostgres(url: string, migrations: Migration[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // One migrator at a time across instances.
    await client.query("SELECT pg_advisory_lock(727271)");
    await client.query(HISTORY_TABLE);
    const { rows } = await client.query<Applied>(`SELECT name, checksum FROM "_app_migrations"`);
    const appliedNames: string[] = [];
    for (const migration of plan(migrations, rows)) {
      await client.query("BEGIN");
      try {
        await client.query(migration.sql);
        await client.query(`INSERT INTO "_app_migrations" (name, checksum, applied_at) VALUES ($1, $2, $3)`, [
          migration.name,
          migration.checksum,
          new Date().toISOString(),
        ]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new MigrationError(`migration ${migration.name} failed: ${(error as Error).message}`);
      }
      appliedNames.push(migration.name);
    }
    return appliedNames;
  } finally {
    await client.query("SELECT pg_advisory_unlock(727271)").catch(() => {});
    await client.end();
  }
}

/** Applies pending migrations to the configured database; returns the names applied. */
export async function migrate(config: Env = env()): Promise<string[]> {
  const { database } = config;
  const migrations = readMigrations(migrationsDir(database.kind));
  return database.kind === "sqlite" ? migrateSqlite(database.file, migrations) : migratePostgres(database.url, migrations);
}
