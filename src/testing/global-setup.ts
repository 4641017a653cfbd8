// Runs once per `npm test`: a fresh database (a new SQLite file, or an emptied PostgreSQL schema) with every
// migration applied through the same runner that `npm run dev` and `npm start` use. At the end it checks
// that the run left a developer's files in .data/ as they were (docs/testing.md#what-npm-test-leaves-alone):
// the demo credentials `npm run dev` printed (demo.env, *.demo.env) and the session secret (auth-secret),
// which a `npm run dev` running beside the tests goes on using. Its database (dev.db) is the dev server's own
// to write, so it is not compared.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { parseEnv } from "@/env";
import { migrate } from "@/db/migrate";

const DEVELOPER_DIR = ".data";
const isDeveloperFile = (name: string) => name === "auth-secret" || name.endsWith("demo.env");

/** Each developer file of .data/ with a digest of its content. */
function developerFiles(): Map<string, string> {
  const files = new Map<string, string>();
  if (!existsSync(DEVELOPER_DIR)) return files;
  for (const name of readdirSync(DEVELOPER_DIR)) {
    if (isDeveloperFile(name)) files.set(name, createHash("sha256").update(readFileSync(join(DEVELOPER_DIR, name))).digest("hex"));
  }
  return files;
}

export default async function setup() {
  const before = developerFiles();
  const config = parseEnv({ ...process.env, NODE_ENV: "test", AUTH_SECRET: "x".repeat(32) });
  if (config.database.kind === "postgresql") {
    const client = new pg.Client({ connectionString: config.database.url });
    await client.connect();
    await client.query("DROP SCHEMA IF EXISTS public CASCADE");
    await client.query("CREATE SCHEMA public");
    await client.end();
  } else {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(config.database.file + suffix, { force: true });
  }
  await migrate(config);
  return () => {
    if (config.database.kind === "sqlite") {
      for (const suffix of ["", "-wal", "-shm"]) rmSync(config.database.file + suffix, { force: true });
    }
    const after = developerFiles();
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((name) => before.get(name) !== after.get(name));
    if (changed.length > 0) {
      // A throw here is only logged by vitest; the exit code is what fails the run.
      console.error(`npm test changed ${changed.map((name) => join(DEVELOPER_DIR, name)).join(", ")}: tests write under .test-scratch/ only`);
      process.exitCode = 1;
    }
  };
}
