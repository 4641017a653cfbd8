// npm run bench [-- --quick] [--duration S] [--connections N] [--port P] [--yes-wipe]
//
// Load-tests the production build (`npm run build` first; this script builds nothing) with autocannon and
// reports requests per second and latency for five scenarios, run one after the other against one server:
//
//   health        GET  /api/health        a static JSON route that touches no database
//   ready         GET  /api/ready         one database round trip
//   bearer read   GET  /api/user/<id>/    bearer-token lookup plus a user read
//   refresh       POST token endpoint     refresh-token rotation: claim, revoke and issue, in one transaction
//   password      POST token endpoint     password grant: an argon2id verification (~11 ms) plus token issue
//
// Why side by side, in one run, against a bare route of the same build: absolute figures depend on the
// machine and on Next.js itself. The health route goes through the same Next.js server, router and
// response path as every other route, so the ratio of a scenario to health ("vs health") separates the
// framework's floor from what our own code and the database add to it.
//
// The server is started through the project's own start path (scripts/serve.ts start: environment check,
// migrations, `next start`) on a scratch database: a fresh SQLite file under .data/bench/ (deleted at the
// end), or, when DATABASE_URL is postgresql://, that database with its public schema dropped and re-created
// (refused unless its name contains "bench" or --yes-wipe is given). Figures go to stdout as a table and to
// bench-results/bench-<database>-<timestamp>.json. There are no timing assertions anywhere: this is a
// measuring tool, not a test.
import autocannon, { type Client, type Instance, type Request, type Result } from "autocannon";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TOKEN_PATH = "/api/connect/oauth2/token/";
const JSON_HEADERS = { "Content-Type": "application/json" };
const PASSWORD = "bench horse battery staple";
const SERVER_START_TIMEOUT_MS = 60_000;

type Options = { duration: number; connections: number; port: number; yesWipe: boolean };
type Database = { kind: "sqlite" | "postgresql"; url: string; cleanup: () => void };
type Fixtures = { userId: number; email: string; clientId: string; clientSecret: string };
type TokenResponse = { access_token: string; refresh_token: string };
type Scenario = { name: string; method: "GET" | "POST"; path: string; request: Request; setupClient?: (client: Client) => void };
type Figures = {
  scenario: string;
  method: string;
  path: string;
  requests_per_second: number;
  relative_to_health: number | null;
  latency_ms: { p50: number; p99: number; average: number; max: number };
  requests_completed: number;
  measured_seconds: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
};

const USAGE =
  "usage: npm run bench -- [--quick] [--duration SECONDS] [--connections N] [--port PORT] [--yes-wipe]\n" +
  "  SQLite scratch file by default; DATABASE_URL=postgresql://.../<name with 'bench'> for PostgreSQL.";

function parseOptions(): Options {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        quick: { type: "boolean", default: false },
        duration: { type: "string" },
        connections: { type: "string", default: "10" },
        port: { type: "string", default: "3999" },
        "yes-wipe": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const integer = (name: string, raw: string, min: number, max: number) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      console.error(`--${name} must be an integer from ${min} to ${max}\n${USAGE}`);
      process.exit(2);
    }
    return value;
  };
  return {
    duration: integer("duration", values.duration ?? (values.quick ? "3" : "10"), 1, 600),
    connections: integer("connections", values.connections, 1, 1000),
    port: integer("port", values.port, 1, 65535),
    yesWipe: values["yes-wipe"],
  };
}

// --- Cleanup: whatever was started or created is undone once, on success, failure or Ctrl-C. -----------

const cleanups: Array<() => unknown> = [];
let running: Instance | null = null;

async function cleanUp(): Promise<void> {
  while (cleanups.length) {
    try {
      await cleanups.pop()!();
    } catch (error) {
      console.error(`cleanup: ${(error as Error).message}`);
    }
  }
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping`);
    running?.stop();
    void cleanUp().finally(() => process.exit(130));
  });
}

// --- Scratch database ---------------------------------------------------------------------------------

async function prepareDatabase(options: Options, stamp: string): Promise<Database> {
  const given = process.env.DATABASE_URL ?? "";
  if (/^postgres(ql)?:\/\//.test(given)) {
    const name = decodeURIComponent(new URL(given).pathname.slice(1));
    if (!name.includes("bench") && !options.yesWipe) {
      console.error(
        `Refusing to wipe PostgreSQL database "${name}": the bench drops its public schema. ` +
          `Use a database whose name contains "bench" (e.g. app_bench) or pass --yes-wipe.`,
      );
      process.exit(1);
    }
    const client = new pg.Client({ connectionString: given });
    await client.connect();
    try {
      await client.query("DROP SCHEMA IF EXISTS public CASCADE");
      await client.query("CREATE SCHEMA public");
    } finally {
      await client.end();
    }
    return { kind: "postgresql", url: given, cleanup: () => {} };
  }
  if (given) console.error(`DATABASE_URL is not PostgreSQL; using a scratch SQLite file instead of ${given}`);
  const dir = join(ROOT, ".data", "bench");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${stamp}-${process.pid}.db`);
  return {
    kind: "sqlite",
    url: `file:${file}`,
    cleanup: () => {
      for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(file + suffix, { force: true });
    },
  };
}

// --- Server -------------------------------------------------------------------------------------------

function assertPortFree(port: number): Promise<void> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", () =>
      reject(new Error(`port ${port} is in use (a server left running?); choose another with --port`)),
    );
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolvePort()));
  });
}

/** Starts `tsx scripts/serve.ts start` in its own process group, so that Next's children die with it. */
function startServer(env: Record<string, string>): { child: ChildProcess; output: () => string; stop: () => Promise<void> } {
  const child = spawn(join(ROOT, "node_modules", ".bin", "tsx"), ["scripts/serve.ts", "start"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Keep the tail of the server's output (and keep draining its pipes) to show it if something goes wrong.
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split("\n").filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 40));
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);

  const groupAlive = () => {
    try {
      process.kill(-child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stop = async () => {
    if (!child.pid || !groupAlive()) return;
    process.kill(-child.pid, "SIGTERM");
    for (let waited = 0; waited < 5_000 && groupAlive(); waited += 100) await sleep(100);
    if (groupAlive()) process.kill(-child.pid, "SIGKILL");
  };
  return { child, output: () => lines.join("\n"), stop };
}

async function waitForHealth(base: string, server: ReturnType<typeof startServer>): Promise<void> {
  const deadline = performance.now() + SERVER_START_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`the server exited during start-up:\n${server.output()}`);
    }
    try {
      const response = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`GET /api/health did not answer 200 within ${SERVER_START_TIMEOUT_MS / 1000} s:\n${server.output()}`);
}

// --- Fixtures -----------------------------------------------------------------------------------------

/**
 * One user and their password client, created with the same domain functions as the admin CLI (in this
 * process, against the server's database; process.env already holds the server's environment, which
 * src/env.ts reads once, so these modules are imported only now).
 */
async function createFixtures(): Promise<Fixtures> {
  const { createUser } = await import("../src/users/create-user");
  const { createClient } = await import("../src/clients/create-client");
  const { disconnectDb } = await import("../src/server/db");
  try {
    const email = `bench-${randomBytes(4).toString("hex")}@example.test`;
    const user = await createUser({ email, password: PASSWORD, name: "Bench User" });
    const client = await createClient({ ownerId: user.id, name: "Bench client", grantType: "password" });
    if (!client.client_secret) throw new Error("the password client has no secret");
    return { userId: user.id, email: user.email, clientId: client.client_id, clientSecret: client.client_secret };
  } finally {
    await disconnectDb();
  }
}

function passwordGrantBody(fixtures: Fixtures): string {
  return JSON.stringify({
    grant_type: "password",
    client_id: fixtures.clientId,
    client_secret: fixtures.clientSecret,
    username: fixtures.email,
    password: PASSWORD,
    scope: "readonly readwrite",
  });
}

async function passwordGrant(base: string, fixtures: Fixtures): Promise<TokenResponse> {
  const response = await fetch(base + TOKEN_PATH, { method: "POST", headers: JSON_HEADERS, body: passwordGrantBody(fixtures) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`password grant answered ${response.status}: ${text}`);
  return JSON.parse(text) as TokenResponse;
}

// --- Scenarios ----------------------------------------------------------------------------------------

async function buildScenarios(base: string, fixtures: Fixtures, connections: number): Promise<Scenario[]> {
  const bearer = await passwordGrant(base, fixtures);
  // One token chain per connection: a refresh token is single-use and reusing one revokes its whole grant,
  // so no two connections may share a chain. Each connection starts from its own password grant.
  const chains: string[] = [];
  for (let i = 0; i < connections; i++) chains.push((await passwordGrant(base, fixtures)).refresh_token);

  const userPath = `/api/user/${fixtures.userId}/`;
  const get = (name: string, path: string, headers: Record<string, string> = {}): Scenario => ({
    name,
    method: "GET",
    path,
    request: { method: "GET", path, headers },
  });

  let nextChain = 0;
  const refresh: Scenario = {
    name: "refresh rotation",
    method: "POST",
    path: TOKEN_PATH,
    request: { method: "POST", path: TOKEN_PATH, headers: JSON_HEADERS },
    // autocannon resets a request's `context` every time a connection loops over its requests, so a chain
    // cannot live there; instead each connection gets, once, its own request whose closures hold its chain.
    setupClient: (client) => {
      const chain = { refreshToken: chains[nextChain++]! };
      client.setRequests([
        {
          method: "POST",
          path: TOKEN_PATH,
          headers: JSON_HEADERS,
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({
              grant_type: "refresh_token",
              refresh_token: chain.refreshToken,
              client_id: fixtures.clientId,
              client_secret: fixtures.clientSecret,
            }),
          }),
          // Any other status means the chain broke; it shows as non-2xx (every later use of the chain fails).
          onResponse: (status, body) => {
            if (status === 200) chain.refreshToken = (JSON.parse(body) as TokenResponse).refresh_token;
          },
        },
      ]);
    },
  };

  return [
    get("health (bare route)", "/api/health"),
    get("ready (database)", "/api/ready"),
    get("bearer read", userPath, { Authorization: `Bearer ${bearer.access_token}` }),
    refresh,
    {
      name: "password grant",
      method: "POST",
      path: TOKEN_PATH,
      request: { method: "POST", path: TOKEN_PATH, headers: JSON_HEADERS, body: passwordGrantBody(fixtures) },
    },
  ];
}

/** A few sequential requests to each GET route, so that loading route code is not part of a measurement. */
async function warmUp(base: string, scenarios: Scenario[]): Promise<void> {
  for (const scenario of scenarios.filter((s) => s.method === "GET")) {
    for (let i = 0; i < 20; i++) {
      const response = await fetch(base + scenario.path, { headers: scenario.request.headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`warm-up: ${scenario.path} answered ${response.status}`);
    }
  }
}

async function measure(base: string, scenario: Scenario, options: Options): Promise<Result> {
  running = autocannon({
    url: base,
    title: scenario.name,
    connections: options.connections,
    duration: options.duration,
    requests: [scenario.request],
    ...(scenario.setupClient ? { setupClient: scenario.setupClient } : {}),
  });
  try {
    return await running;
  } finally {
    running = null;
  }
}

// --- Report -------------------------------------------------------------------------------------------

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

function figures(scenario: Scenario, result: Result, healthRps: number | null): Figures {
  const rps = result.requests.average;
  return {
    scenario: scenario.name,
    method: scenario.method,
    path: scenario.path.replace(/\/api\/user\/\d+\//, "/api/user/<id>/"),
    requests_per_second: round(rps, 1),
    relative_to_health: healthRps ? round(rps / healthRps, 3) : null,
    latency_ms: {
      p50: result.latency.p50,
      p99: result.latency.p99,
      average: round(result.latency.average),
      max: result.latency.max,
    },
    requests_completed: result.requests.total,
    // autocannon samples once a second and may take one more sample than --duration asks for.
    measured_seconds: result.duration,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    status_codes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
  };
}

function table(rows: Figures[]): string {
  const header = ["scenario", "req/s", "p50 ms", "p99 ms", "non-2xx", "errors", "vs health"];
  const body = rows.map((row) => [
    row.scenario,
    row.requests_per_second.toFixed(1),
    String(row.latency_ms.p50),
    String(row.latency_ms.p99),
    String(row.non_2xx),
    String(row.errors),
    row.relative_to_health === null ? "-" : `${row.relative_to_health.toFixed(2)}x`,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  // The scenario column is left-aligned, the figures right-aligned.
  const line = (cells: string[]) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ");
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...body.map(line)].join("\n");
}

function gitCommit(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, stdio: ["ignore", "pipe", "ignore"] }).toString().trim();
  } catch {
    return null;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

// --- Main ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions();
  if (!existsSync(join(ROOT, ".next", "BUILD_ID"))) {
    console.error("No production build found (.next/BUILD_ID): run `npm run build` first.");
    process.exit(1);
  }
  await assertPortFree(options.port);

  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
  const database = await prepareDatabase(options, stamp);
  cleanups.push(database.cleanup);

  const base = `http://127.0.0.1:${options.port}`;
  const serverEnv = {
    NODE_ENV: "production",
    AUTH_SECRET: randomBytes(32).toString("base64url"),
    DATABASE_URL: database.url,
    PORT: String(options.port),
    APP_URL: base,
    LOG_LEVEL: "warn",
  };
  // The fixtures are created in this process with the server's own environment (see createFixtures).
  Object.assign(process.env, serverEnv);

  console.error(`Starting the production build on ${database.kind} (${base})...`);
  const server = startServer(serverEnv);
  cleanups.push(server.stop);
  await waitForHealth(base, server);

  const fixtures = await createFixtures();
  const scenarios = await buildScenarios(base, fixtures, options.connections);
  await warmUp(base, scenarios);

  const rows: Figures[] = [];
  let healthRps: number | null = null;
  for (const scenario of scenarios) {
    console.error(`  ${scenario.name}: ${scenario.method} ${scenario.path}, ${options.connections} connections, ${options.duration} s`);
    const result = await measure(base, scenario, options);
    healthRps ??= result.requests.average;
    rows.push(figures(scenario, result, healthRps));
  }

  console.log(
    `\n${database.kind}, ${options.connections} connections, ${options.duration} s per scenario, ` +
      `node ${process.version}, ${cpus().length} CPUs\n`,
  );
  console.log(table(rows));

  const report = {
    created_at: startedAt.toISOString(),
    commit: gitCommit(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpus().length,
    database: database.kind,
    connections: options.connections,
    duration_seconds: options.duration,
    scenarios: rows,
  };
  const dir = join(ROOT, "bench-results");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${database.kind}-${stamp}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  console.log(`\nFigures written to ${file}`);

  if (rows.some((row) => row.non_2xx || row.errors)) {
    console.error("Some requests failed (non-2xx or errors): the figures of those scenarios are not comparable.");
    console.error(server.output());
    process.exitCode = 1;
  }
}

try {
  await main();
} catch (error) {
  console.error(`bench: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
