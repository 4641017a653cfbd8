// Runs once per `npm test`: a fresh database (a new SQLite file, or an emptied PostgreSQL schema) with every
// migration applied through the same runner that `npm run dev` and `npm start` use.
import { rmSync } from "node:fs";
import pg from "pg";
import { parseEnv } from "@/env";
import { migrate } from "@/db/migrate";

export default async function setup() {
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
  };
}
