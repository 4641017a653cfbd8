// npm run dev | build | start. Before anything serves: the environment is validated (one clear line and exit 1
// when a variable is missing or malformed), pending migrations are applied, and in development an empty
// database is seeded with demo users and clients, whose credentials are printed on every start (from
// .data/demo.env, which the seed writes). `start` refuses the development database unless asked
// (ALLOW_DEV_DATABASE=1): it holds the demo users, whose passwords are in that file.
//
// `start` then runs the custom server (src/server/server.ts: Next.js for pages, the fast lane for /api) in
// this process, or with WORKERS=n, n workers behind a primary that accepts the connections
// (src/server/workers.ts); each worker runs this file again and goes straight to serving, since the primary
// checked and migrated. `dev` stays `next dev`, `build` `next build` (package.json's build then compiles this
// file, with the server and the fast lane's route modules, into dist/: scripts/build-server.ts). Production
// runs the compiled file with plain node, `node dist/server.js start` (`npm start` does the same, with npm in
// front), no TypeScript loader in the process (docs/design.md#memory). Without a build, `node --import tsx
// scripts/serve.ts start` runs the same code from source (not the tsx command, whose parent process relays
// signals and kills a child that does not acknowledge one within 30 ms: a busy server would be killed instead
// of shutting down).
import { spawn } from "node:child_process";
import cluster from "node:cluster";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const mode = process.argv[2];
if (mode !== "dev" && mode !== "build" && mode !== "start") {
  console.error("usage: tsx scripts/serve.ts dev|build|start");
  process.exit(2);
}
const ROOT = fileURLToPath(new URL("..", import.meta.url));
process.env.NEXT_TELEMETRY_DISABLED = "1";
// `next start` runs in production and `next dev` in development; our own checks must agree with them.
const processEnv = process.env as Record<string, string | undefined>;
if (mode === "start") processEnv.NODE_ENV = "production";
if (mode === "dev") processEnv.NODE_ENV = "development";

// Compiled by `npm run build` into dist/server.js (scripts/build-server.ts), which production runs with plain
// node; the fast lane's route modules are then the compiled ones in dist/app, beside it.
const COMPILED = import.meta.url.endsWith(".js");
const nextBin = createRequire(import.meta.url).resolve("next/dist/bin/next");

function runNext(args: string[], extraEnv: Record<string, string> = {}): void {
  const child = spawn(process.execPath, [nextBin, ...args], { stdio: "inherit", env: { ...process.env, ...extraEnv } });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

type Config = import("../src/env").Env;

/**
 * The custom server in this process, until SIGTERM or SIGINT shuts it down gracefully; in a WORKERS worker,
 * serving the connections the primary hands over until it says to stop.
 */
async function serveHere(config: Config): Promise<void> {
  const { startAppServer } = await import("../src/server/server");
  const routesDir = COMPILED ? fileURLToPath(new URL("app", import.meta.url)) : undefined;
  const server = await startAppServer({ dir: ROOT, routesDir, port: config.port, appUrl: config.appUrl, listen: !cluster.isWorker });
  const exit = (code: number) => process.exit(code);
  if (cluster.isWorker) {
    const { serveAsWorker } = await import("../src/server/workers");
    serveAsWorker(server, exit);
    console.log(`Ready on ${config.appUrl} (worker ${cluster.worker?.id}, pid ${process.pid})`);
    return;
  }
  console.log(`Ready on ${config.appUrl} (port ${server.port}, single process, pid ${process.pid})`);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      server.shutdown(signal).then(
        () => exit(0),
        (error: unknown) => {
          console.error(`shutdown failed: ${(error as Error).message}`);
          exit(1);
        },
      );
    });
  }
}

if (mode === "build") {
  runNext(["build"]);
} else {
  const { env, EnvError, loadDotenvFiles, nextAuthEnvironment, productionDatabaseProblem } = await import("../src/env");
  await loadDotenvFiles(mode === "dev" ? "development" : "production");
  let config: Config;
  try {
    config = env();
  } catch (error) {
    if (error instanceof EnvError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  // next-auth reads its own variables; Next (and the workers) inherit them from this process.
  Object.assign(process.env, nextAuthEnvironment(config), { PORT: String(config.port) });

  if (mode === "start" && !cluster.isWorker) {
    const problem = productionDatabaseProblem(config);
    if (problem) {
      console.error(problem);
      process.exit(1);
    }
  }
  if (mode === "start" && cluster.isWorker) {
    await serveHere(config);
  } else {
    const { migrate, MigrationError } = await import("../src/db/migrate");
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
      const { demoCredentials, seedIfEmpty } = await import("../src/cli/seed");
      const { disconnectDb } = await import("../src/db/client");
      const printed = (await seedIfEmpty()) ?? demoCredentials();
      if (printed) console.log("\n" + printed + "\n");
      await disconnectDb();
      runNext(["dev", "--port", String(config.port)]);
    } else if (config.workers > 1) {
      const { runPrimary } = await import("../src/server/workers");
      console.log(`Starting ${config.workers} workers on port ${config.port}`);
      runPrimary(config.workers, config.port);
    } else {
      await serveHere(config);
    }
  }
}
