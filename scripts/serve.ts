// npm run dev | build | start. Before Next.js serves anything: the environment is validated (one clear line
// and exit 1 when a variable is missing or malformed), pending migrations are applied, and in development an
// empty database is seeded with demo users and clients whose credentials are printed once.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";

const mode = process.argv[2];
if (mode !== "dev" && mode !== "build" && mode !== "start") {
  console.error("usage: tsx scripts/serve.ts dev|build|start");
  process.exit(2);
}
process.env.NEXT_TELEMETRY_DISABLED = "1";
// `next start` runs in production and `next dev` in development; our own checks must agree with them.
const processEnv = process.env as Record<string, string | undefined>;
if (mode === "start") processEnv.NODE_ENV = "production";
if (mode === "dev") processEnv.NODE_ENV = "development";

const nextBin = createRequire(import.meta.url).resolve("next/dist/bin/next");

function runNext(args: string[], extraEnv: Record<string, string> = {}): void {
  const child = spawn(process.execPath, [nextBin, ...args], { stdio: "inherit", env: { ...process.env, ...extraEnv } });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (mode === "build") {
  runNext(["build"]);
} else {
  const { env, EnvError, loadDotenvFiles, nextAuthEnvironment } = await import("../src/env");
  await loadDotenvFiles(mode === "dev" ? "development" : "production");
  let config;
  try {
    config = env();
  } catch (error) {
    if (error instanceof EnvError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const { migrate, MigrationError } = await import("../src/server/migrate");
  try {
    const applied = await migrate(config);
    if (applied.length) console.log(`Applied migrations: ${applied.join(", ")}`);
  } catch (error) {
    if (error instanceof MigrationError) {
      console.error(`Database migration refused: ${error.message}`);
      process.exit(1);
    }
    const where = config.database.kind === "sqlite" ? config.database.file : "the PostgreSQL database";
    console.error(`Cannot open ${where}: ${(error as Error).message}`);
    process.exit(1);
  }
  if (mode === "dev") {
    const { seedIfEmpty } = await import("../src/server/seed");
    const { disconnectDb } = await import("../src/server/db");
    const printed = await seedIfEmpty();
    if (printed) console.log("\n" + printed + "\n");
    await disconnectDb();
  }
  runNext([mode, "--port", String(config.port)], { ...nextAuthEnvironment(config), PORT: String(config.port) });
}
