// The migration runner (`prisma migrate` needs Prisma's native schema-engine binary, which this project does
// not download: see scripts/prisma-generate.mjs). Migrations are SQL files in Prisma's layout, one folder per
// database: prisma/<kind>/migrations/<timestamp>_<name>/migration.sql. Each file is applied in its own
// transaction and recorded with its SHA-256; start-up is refused if a file that was applied has changed since,
// or has disappeared.
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

/** Which migrations are pending; throws when the applied history does not match the files. */
export function plan(files: Migration[], applied: Applied[]): Migration[] {
  const byName = new Map(files.map((file) => [file.name, file]));
  for (const row of applied) {
    const file = byName.get(row.name);
    if (!file) throw new MigrationError(`migration ${row.name} was applied to this database but its file is missing`);
    if (file.checksum !== row.checksum) {
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
