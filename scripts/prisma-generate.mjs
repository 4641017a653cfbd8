// Generates the Prisma clients for both databases without any network access.
//
// Prisma's CLI tries to download its native schema engine before `generate`, even though the query path
// (driver adapters) needs no binary. Pointing PRISMA_SCHEMA_ENGINE_BINARY at any executable stops the download;
// `generate` never runs it. See docs/design.md.
//
// The PostgreSQL schema is derived from the SQLite one (the source of truth): only the datasource provider
// differs. `--check` fails when the committed PostgreSQL schema has drifted from what this script derives.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const sqliteSchema = join(root, "prisma/sqlite/schema.prisma");
const pgSchema = join(root, "prisma/postgresql/schema.prisma");

export function derivePostgresSchema(source) {
  const header =
    "// GENERATED from prisma/sqlite/schema.prisma by scripts/prisma-generate.mjs. Do not edit by hand.\n";
  const body = source
    .replace(/^\/\/ SOURCE.*\n/m, "")
    .replace('provider = "sqlite"', 'provider = "postgresql"')
    .replace('output   = "../../src/generated/sqlite"', 'output   = "../../src/generated/postgresql"');
  return header + body;
}

const derived = derivePostgresSchema(readFileSync(sqliteSchema, "utf8"));
if (process.argv.includes("--check")) {
  const current = existsSync(pgSchema) ? readFileSync(pgSchema, "utf8") : "";
  if (current !== derived) {
    console.error("prisma/postgresql/schema.prisma has drifted from prisma/sqlite/schema.prisma: run npm run db:generate");
    process.exit(1);
  }
  process.exit(0);
}
writeFileSync(pgSchema, derived);

const stubDir = join(root, "node_modules/.cache/prisma-offline");
mkdirSync(stubDir, { recursive: true });
const stub = join(stubDir, "schema-engine-stub");
writeFileSync(stub, "#!/bin/sh\necho 'the schema engine is not used by this project' >&2\nexit 1\n");
chmodSync(stub, 0o755);

const prismaBin = join(root, "node_modules/prisma/build/index.js");
for (const schema of [sqliteSchema, pgSchema]) {
  const result = spawnSync(process.execPath, [prismaBin, "generate", "--schema", schema], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: stub, PRISMA_HIDE_UPDATE_MESSAGE: "1", CHECKPOINT_DISABLE: "1" },
  });
  if (result.status !== 0) {
    console.error(`prisma generate failed for ${schema}`);
    process.exit(result.status ?? 1);
  }
}
