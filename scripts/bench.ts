// npm run bench [-- --quick] [--scale] [--duration S] [--connections N] [--port P] [--workers N] [--yes-wipe] [--flood-addresses]
//
// Load-tests the production build (`npm run build` first; this script builds nothing) with autocannon, and
// checks its targets (docs/benchmarks.md) as ratios measured side by side in one run, against three servers
// started from the same build:
//
//   bare node:http     a node:http server answering {"status":"ok"}: what Node itself costs      (port P+2)
//   next start         plain `next start`: what Next costs for the same route handler              (port P+1)
//   npm start          the custom server (node dist/server.js start: the fast lane and Next)      (port P)
//   npm start, no token cache   the same with TOKEN_CACHE_SIZE=0                                  (port P+3)
//
// and, against `npm start`:
//   health        GET  /api/health           a route handler that touches nothing
//   ready         GET  /api/ready            one database round trip
//   bearer read   GET  /api/user/<id>/       bearer validation (from the validated-token cache) and the user
//   bearer read, no token cache                the same on the server without the cache: one statement
//   bearer @16    the same at 16 connections, for its p99
//   introspection POST introspect endpoint   client authentication and one lookup by value
//   refresh       POST token endpoint        refresh rotation (each connection follows its own chain)
//   password      POST token endpoint        password grant: an argon2id verification (~11 ms) and a new grant
//   client_credentials  POST token endpoint  client_secret_basic, a new grant and its token (16 connections)
//   code exchange       POST token endpoint  authorization codes made beforehand (see issuanceScenarios)
//   collection empty, collection page of 20 populated (16 connections)   GET /api/bundle_permission_request/,
//                 /api/bundle/, /api/bundle_permission/: one statement each (src/db/collection-sql.ts), for a
//                 user who is party to nothing and for one whose first page holds 20 objects with their references
//                 (answered from the page cache after the first read: docs/design.md#the-page-cache); the full
//                 pages again on the server without caches (no cache), for what a changed page costs
// plus the raw argon2id verify rate of this machine (in this process, hashed as the server hashes: on hashing
// threads of this process, as many as the server has, each handed its next verification before it ends the
// last, src/users/hashing-threads.ts),
// and "sign-in under a flood": one client's password grants, first alone, then while 64 connections send web
// sign-ins with random e-mails the way a browser does (next-auth's CSRF token and cookie, then POST
// /api/auth/callback/credentials), all from one client address (X-Forwarded-For; the server runs with
// TRUST_PROXY=1, as behind a proxy): the per-address sign-in limit (100 failures in 15 minutes) refuses it.
// With --flood-addresses each sign-in comes from a random address instead, so that no per-address limit
// stops them and only the password hashing queue does (src/users/passwords.ts). Target: the grant's p99 at
// most 3x its idle p99, and the flood refused (429 or 503) rather than queued; the flood's status counts are
// reported.
// The GET scenarios take turns in slices of about 2 s, and so do the password grant and the raw verify rate
// (interleavedRounds()): on a shared machine, whose speed drifts over seconds, the compared figures then come
// from the same moments.
//
// With --scale, it then seeds 1,000,000 access tokens and reads with tokens sampled from all of them, against
// the same reads at 1,000 stored tokens (through the server without the token cache: the lookup's cost is
// the index's, which the cache would hide).
//
// Absolute figures depend on the machine (and on whatever else runs on it: check `uptime` first); the targets
// are ratios in one run, plus the refresh rate and the p99. The server runs on a scratch database: a fresh
// SQLite file under .data/bench/ (deleted at the end), or, when DATABASE_URL is postgresql://, that database
// with its public schema dropped and re-created (refused unless its name contains "bench" or --yes-wipe is
// given). Figures go to stdout and to bench-results/bench-<database>-<timestamp>.json. There are no timing
// assertions anywhere else: this is a measuring tool, not a test.
import autocannon, { type Client, type Instance, type Request, type Result } from "autocannon";
import { hash } from "@node-rs/argon2";
import Database from "better-sqlite3";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { startArguments, startEnvironment } from "./start-command";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TOKEN_PATH = "/api/connect/oauth2/token/";
const INTROSPECT_PATH = "/api/connect/oauth2/introspect/";
const JSON_HEADERS = { "Content-Type": "application/json" };
const PASSWORD = "bench horse battery staple";
const SERVER_START_TIMEOUT_MS = 90_000;
const SCALE_TOKENS = 1_000_000;
const SMALL_TOKENS = 1_000;
const SAMPLE_TOKENS = 2_000;
const CLOCK_TICKS = 100; // USER_HZ: the unit of utime/stime in /proc/<pid>/stat on Linux
const SIGNIN_CALLBACK_PATH = "/api/auth/callback/credentials";
const FLOOD_CONNECTIONS = 64;
/** One client's password grants, one at a time: the legitimate user whose latency the flood must not ruin. */
const LEGITIMATE_CONNECTIONS = 1;
// Memory (docs/benchmarks.md#memory): the server's resident memory, one process, idle and after the run.
const RSS_IDLE_TARGET_MIB = 200;
const RSS_AFTER_TARGET_MIB = 300;

type Options = { duration: number; connections: number; port: number; workers: number; yesWipe: boolean; scale: boolean };
type DatabaseKind = "sqlite" | "postgresql";
type ScratchDatabase = { kind: DatabaseKind; url: string; file: string | null; cleanup: () => void };
type Fixtures = { userId: number; email: string; clientId: string; clientSecret: string; clientPk: number };
type TokenResponse = { access_token: string; refresh_token: string };
type Scenario = {
  name: string;
  base: string;
  method: "GET" | "POST";
  path: string;
  connections?: number;
  request: Request;
  setupClient?: (client: Client) => void;
  /** Run just before the scenario (not measured): what it consumes is made then. */
  prepare?: () => Promise<void>;
  /** Stop after this many requests instead of after the duration (one per single-use thing prepared). */
  amount?: () => number;
};
type ServerGroups = Record<string, number>; // base URL -> process group id
type Figures = {
  scenario: string;
  server: string;
  method: string;
  path: string;
  connections: number;
  requests_per_second: number;
  latency_ms: { p50: number; p99: number; average: number; max: number };
  requests_completed: number;
  /** CPU time the server's processes spent per request (less disturbed by other load than req/s). */
  server_cpu_us_per_request: number | null;
  /** CPU time PostgreSQL's processes spent per request, on PostgreSQL (all of them: the servers' and the bench's). */
  database_cpu_us_per_request: number | null;
  measured_seconds: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
};
type Target = { target: string; measured: string; pass: boolean };

const USAGE =
  "usage: npm run bench -- [--quick] [--scale] [--duration SECONDS] [--connections N] [--port PORT] [--workers N] [--yes-wipe] [--flood-addresses]\n" +
  "  SQLite scratch file by default; DATABASE_URL=postgresql://.../<name with 'bench'> for PostgreSQL.\n" +
  "  Uses ports PORT (npm start), PORT+1 (next start) and PORT+2 (bare node:http).";

function parseOptions(): Options {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        quick: { type: "boolean", default: false },
        scale: { type: "boolean", default: false },
        duration: { type: "string" },
        connections: { type: "string", default: "10" },
        port: { type: "string", default: "3999" },
        workers: { type: "string", default: "1" },
        "yes-wipe": { type: "boolean", default: false },
        "flood-addresses": { type: "boolean", default: false },
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
    port: integer("port", values.port, 1, 65533),
    workers: integer("workers", values.workers, 1, 64),
    yesWipe: values["yes-wipe"],
    scale: values.scale,
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

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const sha256 = (value: string) => createHash("sha256").update(value, "utf8").digest("hex");

// --- Scratch database ---------------------------------------------------------------------------------

async function prepareDatabase(options: Options, stamp: string): Promise<ScratchDatabase> {
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
    return { kind: "postgresql", url: given, file: null, cleanup: () => {} };
  }
  if (given) console.error(`DATABASE_URL is not PostgreSQL; using a scratch SQLite file instead of ${given}`);
  const dir = join(ROOT, ".data", "bench");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${stamp}-${process.pid}.db`);
  return {
    kind: "sqlite",
    url: `file:${file}`,
    file,
    cleanup: () => {
      for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(file + suffix, { force: true });
    },
  };
}

// --- Servers ------------------------------------------------------------------------------------------

function assertPortFree(port: number): Promise<void> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", () => reject(new Error(`port ${port} is in use (a server left running?); choose another with --port`)));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolvePort()));
  });
}

type Started = { name: string; child: ChildProcess; output: () => string; stop: () => Promise<void> };

/** Starts a command in its own process group (so that its children die with it), keeping its output's tail. */
function startProcess(name: string, command: string, args: string[], env: Record<string, string>): Started {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
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
    for (let waited = 0; waited < 12_000 && groupAlive(); waited += 100) await sleep(100);
    if (groupAlive()) process.kill(-child.pid, "SIGKILL");
  };
  return { name, child, output: () => lines.join("\n"), stop };
}

const BARE_SERVER = `
const body = JSON.stringify({ status: "ok" });
require("node:http").createServer((req, res) => {
  res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store", "Content-Length": body.length });
  res.end(body);
}).listen(Number(process.argv[1]), "127.0.0.1");
`;

async function waitForHealth(base: string, server: Started): Promise<void> {
  const deadline = performance.now() + SERVER_START_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${server.name} exited during start-up:\n${server.output()}`);
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
  throw new Error(`${server.name}: GET /api/health did not answer 200 within ${SERVER_START_TIMEOUT_MS / 1000} s:\n${server.output()}`);
}

/** CPU time (user + system, ms) of every process in a process group. */
function groupCpuMs(pgid: number): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/**
 * CPU time (user + system, ms) of every PostgreSQL process on the machine (the backends serving the servers,
 * and PostgreSQL's own), when the bench runs on PostgreSQL; null on SQLite, whose work is the server's.
 */
let databaseCpu: () => Map<number, number> | null = () => null;
function postgresCpuMs(): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) !== "postgres") continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      byPid.set(Number(entry), ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS);
    } catch {
      // gone meanwhile
    }
  }
  return byPid;
}

/** PostgreSQL's CPU (ms) between two readings: each process's own difference (a process that ended in between is not counted). */
function databaseCpuBetween(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (before === null || after === null) return null;
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/**
 * Password grants against the raw argon2id verification (docs/benchmarks.md#password-grants-and-the-hashing-threads):
 * judged by rate, with the same comparison by CPU beside it: the server's CPU per grant (its hashing threads,
 * and on SQLite the database, included) against a raw verification's CPU in the bench's process, and on
 * PostgreSQL with PostgreSQL's CPU per grant added. The rate also pays PostgreSQL's backends and autocannon,
 * which share this machine's cores with the grants but not with the raw loop.
 */
function passwordTarget(rows: Figures[], rawRate: number, rawCpuUs: number | null): Target {
  const grant = rows.find((row) => row.scenario === "password grant")!;
  const byRate = rawRate > 0 ? grant.requests_per_second / rawRate : 0;
  const { server_cpu_us_per_request: serverCpu, database_cpu_us_per_request: databaseCpu } = grant;
  const byCpu = !serverCpu || !rawCpuUs ? "" :
    `; by CPU ${(rawCpuUs / serverCpu).toFixed(2)}x (${serverCpu} µs of the server's a grant vs ${Math.round(rawCpuUs)} µs a verification)` +
    (databaseCpu === null ? "" : `, ${(rawCpuUs / (serverCpu + databaseCpu)).toFixed(2)}x with PostgreSQL's ${databaseCpu} µs a grant`);
  return {
    target: "password grants >= 0.8x raw argon2id verify rate",
    measured: `${byRate.toFixed(2)}x (${grant.requests_per_second.toFixed(0)}/s vs ${rawRate.toFixed(0)}/s)${byCpu}`,
    pass: byRate >= 0.8,
  };
}

/** Resident memory of every process in a process group (the server and, with WORKERS, its workers). */
function groupRss(pgid: number): Array<{ pid: number; rssMiB: number; command: string }> {
  const out: Array<{ pid: number; rssMiB: number; command: string }> = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue; // field 5 of stat: the process group
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, "utf8"));
      const command = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean).slice(0, 3).join(" ");
      out.push({ pid: Number(entry), rssMiB: round(Number(rss?.[1] ?? 0) / 1024, 1), command: command.slice(0, 90) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
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
  const { db, disconnectDb } = await import("../src/db/client");
  try {
    const email = `bench-${randomBytes(4).toString("hex")}@example.test`;
    const user = await createUser({ email, password: PASSWORD, name: "Bench User" });
    const client = await createClient({ ownerId: user.id, name: "Bench client", grantType: "password" });
    if (!client.client_secret) throw new Error("the password client has no secret");
    const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    return { userId: user.id, email: user.email, clientId: client.client_id, clientSecret: client.client_secret, clientPk: row.id };
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

const get = (name: string, base: string, path: string, headers: Record<string, string> = {}, connections?: number): Scenario => ({
  name,
  base,
  method: "GET",
  path,
  ...(connections ? { connections } : {}),
  request: { method: "GET", path, headers },
});

/** Each connection takes its own tokens in turn from `tokens` (bearer reads spread over many rows). */
function rotatingBearer(name: string, base: string, path: string, tokens: string[], connections?: number): Scenario {
  let next = 0;
  return {
    // (The warm-up sends this one with the first token; each connection then takes its own turns.)
    ...get(name, base, path, { Authorization: `Bearer ${tokens[0]}` }, connections),
    setupClient: (client) => {
      let i = next++ * 7919;
      client.setRequests([
        {
          method: "GET",
          path,
          setupRequest: (request) => ({ ...request, headers: { Authorization: `Bearer ${tokens[i++ % tokens.length]}` } }),
        },
      ]);
    },
  };
}

type Bases = { app: string; next: string; bare: string; uncached: string | null };

async function buildScenarios(bases: Bases, fixtures: Fixtures, connections: number): Promise<{ scenarios: Scenario[]; bearer: string }> {
  const bearer = await passwordGrant(bases.app, fixtures);
  // One token chain per connection: a refresh token is single-use and reusing one revokes its whole grant,
  // so no two connections may share a chain. Each connection starts from its own password grant.
  const chains: string[] = [];
  for (let i = 0; i < connections; i++) chains.push((await passwordGrant(bases.app, fixtures)).refresh_token);
  const userPath = `/api/user/${fixtures.userId}/`;
  const auth = { Authorization: `Bearer ${bearer.access_token}` };

  let nextChain = 0;
  const refresh: Scenario = {
    name: "refresh rotation",
    base: bases.app,
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
            body: JSON.stringify({ grant_type: "refresh_token", refresh_token: chain.refreshToken, client_id: fixtures.clientId, client_secret: fixtures.clientSecret }),
          }),
          // Any other status means the chain broke; it shows as non-2xx (every later use of the chain fails).
          onResponse: (status, body) => {
            if (status === 200) chain.refreshToken = (JSON.parse(body) as TokenResponse).refresh_token;
          },
        },
      ]);
    },
  };
  const introspection = JSON.stringify({ token: bearer.access_token, client_id: fixtures.clientId, client_secret: fixtures.clientSecret });

  return {
    bearer: bearer.access_token,
    scenarios: [
      get("health: bare node:http", bases.bare, "/api/health"),
      get("health: next start", bases.next, "/api/health"),
      get("health: npm start", bases.app, "/api/health"),
      get("ready (one query)", bases.app, "/api/ready"),
      get("bearer read", bases.app, userPath, auth),
      get("bearer read @16", bases.app, userPath, auth, 16),
      ...(bases.uncached ? [get("bearer read, no token cache", bases.uncached, userPath, auth)] : []),
      {
        name: "introspection",
        base: bases.app,
        method: "POST",
        path: INTROSPECT_PATH,
        request: { method: "POST", path: INTROSPECT_PATH, headers: JSON_HEADERS, body: introspection },
      },
      refresh,
      {
        name: "password grant",
        base: bases.app,
        method: "POST",
        path: TOKEN_PATH,
        request: { method: "POST", path: TOKEN_PATH, headers: JSON_HEADERS, body: passwordGrantBody(fixtures) },
      },
    ],
  };
}

// --- Token issuance (client_credentials, code exchange) ----------------------------------------------
//
// client_credentials: a client_credentials client of the bench user, authenticated with client_secret_basic
// (RFC 6749 2.3.1: the form-encoded id and secret in a Basic header), a form body asking for readonly; each
// request starts a grant with its token and token.issued event (src/db/fast-sql.ts startGrant). At 16
// connections, where the targets are set.
// code exchange: authorization codes of an authorization_code client of the bench user, each exchanged once
// (client_secret_post in a JSON body, no PKCE, scope readonly: no id_token, so that the figure is the
// exchange's own). The codes are made just before the scenario, in this process against the server's
// database, by completeAuthorization() (src/oauth/authorize.ts), the function the consent decision calls once
// the person approves (src/consent/decide-consent.ts): the grant and the code rows exactly as a browser's
// approval writes them, without the pages. A code lives 60 s, so the scenario makes duration x
// CODES_PER_SECOND of them (the target's rate; at most MAX_CODES, which a loaded machine still makes in well
// under a minute) and stops when each has been exchanged once (its req/s is over that time).
const CLIENT_CREDENTIALS_CONNECTIONS = 16;
const CODES_PER_SECOND = 1_500;
const MAX_CODES = 12_000;
const CODE_REDIRECT_URI = "https://bench.example.test/callback";

async function issuanceScenarios(bases: Bases, fixtures: Fixtures, options: Options): Promise<Scenario[]> {
  const { createClient } = await import("../src/clients/create-client");
  const { disconnectDb } = await import("../src/db/client");
  let credentials: { id: string; secret: string };
  let codeClient: { id: string; secret: string };
  try {
    const made = await createClient({ ownerId: fixtures.userId, name: "Bench service", grantType: "client_credentials" });
    const code = await createClient({ ownerId: fixtures.userId, name: "Bench web app", grantType: "authorization_code", redirectUris: [CODE_REDIRECT_URI] });
    if (!made.client_secret || !code.client_secret) throw new Error("a bench client has no secret");
    credentials = { id: made.client_id, secret: made.client_secret };
    codeClient = { id: code.client_id, secret: code.client_secret };
  } finally {
    await disconnectDb();
  }
  const basic = Buffer.from(`${encodeURIComponent(credentials.id)}:${encodeURIComponent(credentials.secret)}`).toString("base64");
  const form = { "Content-Type": "application/x-www-form-urlencoded", Authorization: `Basic ${basic}` };

  let codes: string[] = [];
  let next = 0;
  const count = Math.min(options.duration * CODES_PER_SECOND, MAX_CODES);
  const exchange = (code: string) =>
    JSON.stringify({ grant_type: "authorization_code", code, redirect_uri: CODE_REDIRECT_URI, client_id: codeClient.id, client_secret: codeClient.secret });
  return [
    {
      name: "client_credentials",
      base: bases.app,
      method: "POST",
      path: TOKEN_PATH,
      connections: CLIENT_CREDENTIALS_CONNECTIONS,
      request: { method: "POST", path: TOKEN_PATH, headers: form, body: "grant_type=client_credentials&scope=readonly" },
    },
    {
      name: "code exchange",
      base: bases.app,
      method: "POST",
      path: TOKEN_PATH,
      request: { method: "POST", path: TOKEN_PATH, headers: JSON_HEADERS },
      prepare: async () => {
        const started = performance.now();
        codes = await approvedCodes(codeClient.id, fixtures.userId, count);
        next = 0;
        console.error(`  code exchange: ${codes.length} codes made through the consent step in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      },
      amount: () => codes.length,
      // Each request takes the next unused code, whichever connection sends it.
      setupClient: (client) => {
        client.setRequests([{ method: "POST", path: TOKEN_PATH, headers: JSON_HEADERS, setupRequest: (request) => ({ ...request, body: exchange(codes[Math.min(next++, codes.length - 1)]!) }) }]);
      },
    },
  ];
}

/** `count` authorization codes, as the consent decision makes them when the bench user approves. */
async function approvedCodes(clientId: string, userId: number, count: number): Promise<string[]> {
  const { completeAuthorization } = await import("../src/oauth/authorize");
  const { db, disconnectDb } = await import("../src/db/client");
  try {
    const client = await (await db()).client.findUniqueOrThrow({ where: { clientId } });
    const request = {
      clientId,
      userId,
      responseType: "code" as const,
      redirectUri: CODE_REDIRECT_URI,
      scopes: ["readonly" as const],
      state: "bench",
      codeChallenge: null,
      expiresAt: 0,
    };
    const codes: string[] = [];
    const AT_ONCE = 32;
    while (codes.length < count) {
      const batch = await Promise.all(Array.from({ length: Math.min(AT_ONCE, count - codes.length) }, () => completeAuthorization(request, client)));
      for (const response of batch) {
        const code = new URL(response.headers.get("location")!).searchParams.get("code");
        if (!code) throw new Error(`the consent step answered ${response.headers.get("location")}`);
        codes.push(code);
      }
    }
    return codes;
  } finally {
    await disconnectDb();
  }
}

// --- Collection reads (docs/benchmarks.md#collection-reads) ---------------------------------------------
// The three collections that src/db/collection-sql.ts reads in one statement, at 16 connections: empty (the
// bench user is party to nothing) and a full default page of 20 populated objects (a second user who owns 25
// bundles, granted each to someone, and is the target of 25 permission requests). Targets: each at least
// 0.25x the one-user bearer read of the same run (`bearer read @16`) and p99 under 10 ms.
const COLLECTIONS = ["bundle_permission_request", "bundle", "bundle_permission"] as const;
const COLLECTION_CONNECTIONS = 16;
const COLLECTION_ROWS = 25;

/** A user (with a password client, as createFixtures()) whose three collections hold COLLECTION_ROWS objects each. */
async function createCollectionFixtures(): Promise<Fixtures> {
  const { createUser } = await import("../src/users/create-user");
  const { createClient } = await import("../src/clients/create-client");
  const { db, disconnectDb, write } = await import("../src/db/client");
  try {
    const tag = randomBytes(4).toString("hex");
    const email = `bench-pages-${tag}@example.test`;
    const user = await createUser({ email, password: PASSWORD, name: "Bench Owner" });
    const client = await createClient({ ownerId: user.id, name: "Bench pages client", grantType: "password" });
    if (!client.client_secret) throw new Error("the password client has no secret");
    const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    const at = Date.now();
    await write(async (tx) => {
      const others = [];
      for (let i = 0; i < 2; i++) others.push(await tx.user.create({ data: { email: `bench-other-${tag}-${i}@example.test`, name: `Bench Other ${i}`, passwordHash: "not a hash: never signs in" } }));
      for (let i = 0; i < COLLECTION_ROWS; i++) {
        const createdAt = new Date(at - (COLLECTION_ROWS - i) * 1000);
        const bundle = await tx.bundle.create({ data: { name: `Bench bundle ${i}`, ownerId: user.id, createdAt } });
        await tx.bundlePermission.create({ data: { bundleId: bundle.id, userAllowedId: others[0]!.id, userTargetId: user.id, createdAt } });
        await tx.permissionRequest.create({
          data: {
            tokenDigest: createHash("sha256").update(`bench-${tag}-${i}`).digest("base64url"),
            bundleId: bundle.id,
            userAllowedId: others[1]!.id,
            userTargetId: user.id,
            requestedById: others[0]!.id,
            allowedNamedByEmail: i % 2 === 0,
            redeemUrl: "https://client.example.test/redeem",
            ttl: 604800,
            status: i % 3 === 0 ? "declined" : "pending",
            createdAt,
            expiresAt: new Date(at + 7 * 24 * 3600 * 1000),
          },
        });
      }
    });
    return { userId: user.id, email: user.email, clientId: client.client_id, clientSecret: client.client_secret, clientPk: row.id };
  } finally {
    await disconnectDb();
  }
}

function issuanceTargets(rows: Figures[], kind: DatabaseKind): Target[] {
  const row = (name: string) => rows.find((r) => r.scenario === name);
  const targets: Target[] = [];
  const check = (name: string, min: number, what: string) => {
    const found = row(name);
    if (found) targets.push({ target: `${what} >= ${min.toLocaleString("en")}/s (${kind})`, measured: `${found.requests_per_second.toFixed(0)}/s`, pass: found.requests_per_second >= min });
  };
  check("client_credentials", kind === "sqlite" ? 2_000 : 1_500, `client_credentials at ${CLIENT_CREDENTIALS_CONNECTIONS} connections`);
  if (kind === "sqlite") {
    check("code exchange", 1_500, "code exchanges");
    check("refresh rotation", 2_000, "refresh rotations beside issuance");
  }
  return targets;
}

const emptyCollection = (name: string) => `collection empty: ${name} @${COLLECTION_CONNECTIONS}`;
const fullCollection = (name: string) => `collection page of 20 populated: ${name} @${COLLECTION_CONNECTIONS}`;

const uncachedCollection = (name: string) => `collection page of 20 populated, no cache: ${name} @${COLLECTION_CONNECTIONS}`;

/**
 * The collection scenarios: the bench user's empty collections, the populated user's first pages; and, on the
 * server without caches (TOKEN_CACHE_SIZE=0, which also turns the page cache off: docs/design.md#the-page-cache),
 * the populated pages again, for what a page costs when it changed since its last read (no target).
 */
async function collectionScenarios(base: string, bearer: string, uncached: string | null): Promise<Scenario[]> {
  const populated = await passwordGrant(base, await createCollectionFixtures());
  const populatedAuth = { Authorization: `Bearer ${populated.access_token}` };
  return COLLECTIONS.flatMap((name) => [
    get(emptyCollection(name), base, `/api/${name}/`, { Authorization: `Bearer ${bearer}` }, COLLECTION_CONNECTIONS),
    get(fullCollection(name), base, `/api/${name}/`, populatedAuth, COLLECTION_CONNECTIONS),
    ...(uncached ? [get(uncachedCollection(name), uncached, `/api/${name}/`, populatedAuth, COLLECTION_CONNECTIONS)] : []),
  ]);
}

/** Each collection scenario: >= 0.25x `bearer read @16` of the same run, and p99 < 10 ms. */
function collectionTargets(rows: Figures[]): Target[] {
  const row = (name: string) => rows.find((r) => r.scenario === name);
  const bearer = row("bearer read @16")!;
  return COLLECTIONS.flatMap((name) => [emptyCollection(name), fullCollection(name)]).flatMap((name): Target[] => {
    const measured = row(name);
    if (!measured) return [];
    const ratio = bearer.requests_per_second > 0 ? measured.requests_per_second / bearer.requests_per_second : 0;
    return [
      { target: `${name} >= 0.25x bearer read @16`, measured: `${ratio.toFixed(2)}x (${measured.requests_per_second.toFixed(0)}/s vs ${bearer.requests_per_second.toFixed(0)}/s)`, pass: ratio >= 0.25 },
      { target: `${name} p99 < 10 ms`, measured: `${measured.latency_ms.p99} ms`, pass: measured.latency_ms.p99 < 10 },
    ];
  });
}

/** A few sequential requests to each GET route, so that loading route code is not part of a measurement. */
async function warmUp(scenarios: Scenario[]): Promise<void> {
  for (const scenario of scenarios.filter((s) => s.method === "GET")) {
    for (let i = 0; i < 50; i++) {
      const response = await fetch(scenario.base + scenario.path, { headers: scenario.request.headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`warm-up: ${scenario.base}${scenario.path} answered ${response.status}`);
    }
  }
}

async function measure(scenario: Scenario, options: Options, groups: ServerGroups = {}, seconds = options.duration): Promise<{ result: Result; cpuMs: number | null; databaseMs: number | null }> {
  const pgid = groups[scenario.base];
  const before = pgid ? groupCpuMs(pgid) : 0;
  const databaseBefore = databaseCpu();
  running = autocannon({
    url: scenario.base,
    title: scenario.name,
    connections: scenario.connections ?? options.connections,
    ...(scenario.amount ? { amount: scenario.amount() } : { duration: seconds }),
    requests: [scenario.request],
    ...(scenario.setupClient ? { setupClient: scenario.setupClient } : {}),
  });
  try {
    const result = await running;
    return { result, cpuMs: pgid ? groupCpuMs(pgid) - before : null, databaseMs: databaseCpuBetween(databaseBefore, databaseCpu()) };
  } finally {
    running = null;
  }
}

function figures(scenario: Scenario, result: Result, connections: number, cpuMs: number | null = null, databaseMs: number | null = null): Figures {
  return {
    scenario: scenario.name,
    server: scenario.base,
    method: scenario.method,
    path: scenario.path.replace(/\/api\/user\/\d+\//, "/api/user/<id>/"),
    connections,
    // (A scenario that stops after an amount ends within a second's sample: its rate is over its whole time.)
    requests_per_second: round(scenario.amount && result.duration > 0 ? result.requests.total / result.duration : result.requests.average, 1),
    latency_ms: { p50: result.latency.p50, p99: result.latency.p99, average: round(result.latency.average), max: result.latency.max },
    requests_completed: result.requests.total,
    server_cpu_us_per_request: cpuMs === null || !result.requests.total ? null : Math.round((cpuMs * 1000) / result.requests.total),
    database_cpu_us_per_request: databaseMs === null || !result.requests.total ? null : Math.round((databaseMs * 1000) / result.requests.total),
    // autocannon samples once a second and may take one more sample than --duration asks for.
    measured_seconds: result.duration,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    status_codes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
  };
}

/**
 * One scenario's figures from its interleaved slices: requests and CPU time summed, req/s over the slices'
 * whole time, p50 and the average weighted by requests, p99 and max the worst slice's (never better than any
 * slice showed).
 */
function mergeFigures(slices: Figures[]): Figures {
  if (slices.length === 1) return slices[0]!;
  const sum = (pick: (f: Figures) => number) => slices.reduce((total, f) => total + pick(f), 0);
  const requests = sum((f) => f.requests_completed);
  const seconds = sum((f) => f.measured_seconds);
  const weighted = (pick: (f: Figures) => number) => (requests ? sum((f) => pick(f) * f.requests_completed) / requests : 0);
  const cpuKnown = slices.every((f) => f.server_cpu_us_per_request !== null);
  const databaseKnown = slices.every((f) => f.database_cpu_us_per_request !== null);
  const statusCodes: Record<string, number> = {};
  for (const f of slices) for (const [code, count] of Object.entries(f.status_codes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  return {
    ...slices[0]!,
    requests_per_second: round(sum((f) => f.requests_per_second * f.measured_seconds) / seconds, 1),
    latency_ms: {
      p50: Math.round(weighted((f) => f.latency_ms.p50)),
      p99: Math.max(...slices.map((f) => f.latency_ms.p99)),
      average: round(weighted((f) => f.latency_ms.average)),
      max: Math.max(...slices.map((f) => f.latency_ms.max)),
    },
    requests_completed: requests,
    server_cpu_us_per_request: cpuKnown && requests ? Math.round(weighted((f) => f.server_cpu_us_per_request!)) : null,
    database_cpu_us_per_request: databaseKnown && requests ? Math.round(weighted((f) => f.database_cpu_us_per_request!)) : null,
    measured_seconds: seconds,
    non_2xx: sum((f) => f.non_2xx),
    errors: sum((f) => f.errors),
    timeouts: sum((f) => f.timeouts),
    status_codes: statusCodes,
  };
}

/**
 * Slices per interleaved scenario: the machine's speed drifts over seconds (a shared host: the same health
 * check has measured 41 and 63 µs of CPU a request in consecutive runs), so scenarios that a target compares
 * take turns, in slices of about 2 s, instead of one after the other; a slow spell then falls on each alike.
 */
const WARM_UP_SECONDS = 2;
const interleavedRounds = (duration: number) => Math.max(1, Math.min(5, Math.floor(duration / 2)));

// --- Sign-in under a flood -----------------------------------------------------------------------------

/** next-auth's CSRF token and the cookie that carries its hash, as a browser's sign-in page gets them. */
async function signInCsrf(base: string): Promise<{ token: string; cookie: string }> {
  const response = await fetch(`${base}/api/auth/csrf`);
  const { csrfToken } = (await response.json()) as { csrfToken?: string };
  const cookie = response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0]!)
    .join("; ");
  if (response.status !== 200 || !csrfToken || !cookie) throw new Error(`GET /api/auth/csrf answered ${response.status} without a token and cookie`);
  return { token: csrfToken, cookie };
}

/**
 * The flood's client address, sent as X-Forwarded-For (believed: the server runs with TRUST_PROXY=1): one
 * address, as an attacker with one machine floods; `--flood-addresses` spreads it over random addresses in
 * 10.0.0.0/8 (a botnet), which no per-address limit stops and only the hashing queue's bound does.
 */
const floodAddress = () => (process.argv.includes("--flood-addresses") ? `10.${randomBytes(3).join(".")}` : "10.9.9.9");

/**
 * Web sign-ins with random e-mails and passwords, each as next-auth's sign-in page posts it (the page's
 * fetch: json=true), from one client address (see floodAddress).
 */
function signInFlood(base: string, csrf: { token: string; cookie: string }): Scenario {
  const headers = { "Content-Type": "application/x-www-form-urlencoded", Cookie: csrf.cookie };
  const body = () =>
    new URLSearchParams({ csrfToken: csrf.token, email: `flood-${randomBytes(6).toString("hex")}@example.test`, password: "not the password", callbackUrl: `${base}/`, json: "true" }).toString();
  return {
    name: `sign-in flood @${FLOOD_CONNECTIONS}`,
    base,
    method: "POST",
    path: SIGNIN_CALLBACK_PATH,
    connections: FLOOD_CONNECTIONS,
    request: { method: "POST", path: SIGNIN_CALLBACK_PATH, headers, body: body() },
    setupClient: (client) => {
      client.setRequests([
        {
          method: "POST",
          path: SIGNIN_CALLBACK_PATH,
          setupRequest: (request) => ({ ...request, headers: { ...headers, "X-Forwarded-For": floodAddress() }, body: body() }),
        },
      ]);
    },
  };
}

type FloodFigures = { idle: Figures; underFlood: Figures; flood: Figures };

/**
 * The legitimate grant alone for `seconds`, then again while the flood runs (the flood starts a second
 * before the grant's measurement and ends a second after it).
 */
async function signInUnderFlood(bases: Bases, fixtures: Fixtures, options: Options, groups: ServerGroups, seconds: number): Promise<FloodFigures> {
  const grant = (name: string): Scenario => ({
    name,
    base: bases.app,
    method: "POST",
    path: TOKEN_PATH,
    connections: LEGITIMATE_CONNECTIONS,
    request: { method: "POST", path: TOKEN_PATH, headers: JSON_HEADERS, body: passwordGrantBody(fixtures) },
  });
  const idleGrant = grant(`password grant @${LEGITIMATE_CONNECTIONS}, idle`);
  const floodedGrant = grant(`password grant @${LEGITIMATE_CONNECTIONS}, sign-in flood`);
  const flood = signInFlood(bases.app, await signInCsrf(bases.app));
  const idleRun = await measure(idleGrant, options, groups, seconds);
  const floodInstance = autocannon({
    url: flood.base,
    title: flood.name,
    connections: FLOOD_CONNECTIONS,
    duration: seconds + 2,
    requests: [flood.request],
    setupClient: flood.setupClient!,
  });
  let floodResult: Result;
  let floodedRun: Awaited<ReturnType<typeof measure>>;
  try {
    await sleep(1_000);
    floodedRun = await measure(floodedGrant, options, groups, seconds);
  } finally {
    floodResult = await floodInstance;
  }
  return {
    idle: figures(idleGrant, idleRun.result, LEGITIMATE_CONNECTIONS, idleRun.cpuMs),
    underFlood: figures(floodedGrant, floodedRun.result, LEGITIMATE_CONNECTIONS, floodedRun.cpuMs),
    flood: figures(flood, floodResult, FLOOD_CONNECTIONS),
  };
}

const statusCounts = (row: Figures) =>
  Object.entries(row.status_codes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, count]) => `${code}: ${count}`)
    .join(", ") || "none";

// --- The raw argon2id verify rate ----------------------------------------------------------------------

/** A stored hash with the server's parameters (src/users/passwords.ts), verified a few times to warm up. */
async function rawVerifyHash(parallel: number): Promise<string> {
  const { runOnHashingThread } = await import("../src/users/hashing-threads");
  const options = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
  const stored = await hash(PASSWORD, options);
  for (let i = 0; i < parallel * 2; i++) await runOnHashingThread({ op: "verify", hash: stored, password: PASSWORD }, parallel);
  return stored;
}

/**
 * Verifications per second on `parallel` hashing threads, the way the server hashes (src/users/passwords.ts):
 * each thread handed HASHES_PER_THREAD at once, so that it takes its next the moment it ends the last. (Called
 * one at a time through @node-rs/argon2's asynchronous functions, on libuv's pool, the same machine verified
 * 6-15% fewer: docs/benchmarks.md#password-grants-and-the-hashing-threads.) With the CPU time this process
 * spent on them (its hashing threads and the main thread handing them over), for the comparison by CPU.
 */
async function rawVerifyRate(stored: string, parallel: number, seconds: number): Promise<{ rate: number; cpuUs: number; done: number }> {
  const { runOnHashingThread } = await import("../src/users/hashing-threads");
  const { HASHES_PER_THREAD } = await import("../src/users/passwords");
  let done = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: parallel * HASHES_PER_THREAD }, async () => {
      while (performance.now() < end) {
        await runOnHashingThread({ op: "verify", hash: stored, password: PASSWORD }, parallel);
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - started) / 1000);
  const cpu = process.cpuUsage(cpuBefore);
  return { rate, cpuUs: cpu.user + cpu.system, done };
}

// --- Scale: 1,000,000 stored access tokens --------------------------------------------------------------

const scaleToken = (i: number) => `bench-scale-token-${i}`;

/** Adds access tokens numbered [from, to) to one grant of the bench user, straight through the driver. */
async function seedTokens(database: ScratchDatabase, fixtures: Fixtures, from: number, to: number): Promise<void> {
  const at = new Date();
  const expires = new Date(at.getTime() + 24 * 3600_000);
  if (database.kind === "postgresql") {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const grant = await client.query<{ id: number }>(
        `INSERT INTO "Grant" ("clientId", "userId", "grantType", "scopes", "createdAt", "lastUsedAt") VALUES ($1, $2, 'password', 'readonly', $3, $3) RETURNING "id"`,
        [fixtures.clientPk, fixtures.userId, at.toISOString()],
      );
      for (let start = from; start < to; start += 100_000) {
        await client.query(
          `INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt")
           SELECT encode(sha256(convert_to('bench-scale-token-' || i, 'UTF8')), 'hex'), $1, $2, $3, 'readonly', $4, $5
           FROM generate_series($6::int, $7::int) AS i`,
          [grant.rows[0]!.id, fixtures.clientPk, fixtures.userId, at.toISOString(), expires.toISOString(), start, Math.min(to, start + 100_000) - 1],
        );
      }
      await client.query(`ANALYZE "AccessToken"`);
    } finally {
      await client.end();
    }
    return;
  }
  const sqlite = new Database(database.file!, { timeout: 10_000 });
  try {
    const iso = (date: Date) => date.toISOString().replace("Z", "+00:00");
    const grantId = Number(
      sqlite
        .prepare(`INSERT INTO "Grant" ("clientId", "userId", "grantType", "scopes", "createdAt", "lastUsedAt") VALUES (?, ?, 'password', 'readonly', ?, ?)`)
        .run(fixtures.clientPk, fixtures.userId, iso(at), iso(at)).lastInsertRowid,
    );
    const insert = sqlite.prepare(`INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt") VALUES (?, ?, ?, ?, 'readonly', ?, ?)`);
    const batch = sqlite.transaction((start: number, end: number) => {
      for (let i = start; i < end; i++) insert.run(sha256(scaleToken(i)), grantId, fixtures.clientPk, fixtures.userId, iso(at), iso(expires));
    });
    for (let start = from; start < to; start += 50_000) batch(start, Math.min(to, start + 50_000));
    sqlite.exec(`ANALYZE "AccessToken"`);
  } finally {
    sqlite.close();
  }
}

/** SAMPLE_TOKENS distinct tokens, spread at random over [0, count). */
function sampleTokens(count: number): string[] {
  const picked = new Set<number>();
  while (picked.size < Math.min(SAMPLE_TOKENS, count)) picked.add(Math.floor(Math.random() * count));
  return [...picked].map(scaleToken);
}

// --- Report -------------------------------------------------------------------------------------------

function table(rows: Figures[]): string {
  const header = ["scenario", "conns", "req/s", "p50 ms", "p99 ms", "server CPU µs/req", "non-2xx", "errors"];
  const body = rows.map((row) => [
    row.scenario,
    String(row.connections),
    row.requests_per_second.toFixed(1),
    String(row.latency_ms.p50),
    String(row.latency_ms.p99),
    row.server_cpu_us_per_request === null ? "-" : String(row.server_cpu_us_per_request),
    String(row.non_2xx),
    String(row.errors),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ");
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...body.map(line)].join("\n");
}

function gitCommit(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, stdio: ["ignore", "pipe", "ignore"] }).toString().trim();
  } catch {
    return null;
  }
}

// --- Main ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions();
  if (!existsSync(join(ROOT, ".next", "BUILD_ID")) || !existsSync(join(ROOT, "dist", "server.js"))) {
    console.error("No production build found (.next/BUILD_ID and dist/server.js): run `npm run build` first.");
    process.exit(1);
  }
  for (const port of [options.port, options.port + 1, options.port + 2, options.port + 3]) await assertPortFree(port);

  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
  const load = loadavg().map((value) => round(value, 2));
  if (load[0]! > cpus().length * 0.5) console.error(`Warning: load average ${load.join(", ")} on ${cpus().length} CPUs: the figures will be disturbed.`);
  const database = await prepareDatabase(options, stamp);
  if (database.kind === "postgresql") databaseCpu = postgresCpuMs;
  cleanups.push(database.cleanup);

  const bases: Bases = {
    app: `http://127.0.0.1:${options.port}`,
    next: `http://127.0.0.1:${options.port + 1}`,
    bare: `http://127.0.0.1:${options.port + 2}`,
    uncached: `http://127.0.0.1:${options.port + 3}`,
  };
  const authSecret = randomBytes(32).toString("base64url");
  const serverEnv = {
    NODE_ENV: "production",
    AUTH_SECRET: authSecret,
    DATABASE_URL: database.url,
    PORT: String(options.port),
    APP_URL: bases.app,
    LOG_LEVEL: "warn",
    WORKERS: String(options.workers),
    RESEND_API_KEY: "",
    // As behind a proxy: the sign-in flood's X-Forwarded-For addresses are believed (see signInUnderFlood).
    TRUST_PROXY: "1",
  };
  // The fixtures are created in this process with the server's own environment (see createFixtures).
  Object.assign(process.env, serverEnv);

  console.error(`Starting npm start (WORKERS=${options.workers}), next start and a bare node:http server on ${database.kind}...`);
  const app = startProcess("npm start", process.execPath, startArguments(ROOT), { ...serverEnv, ...startEnvironment(ROOT) });
  cleanups.push(app.stop);
  await waitForHealth(bases.app, app); // migrated by now
  const plainNext = startProcess("next start", process.execPath, [join(ROOT, "node_modules", "next", "dist", "bin", "next"), "start", "--port", String(options.port + 1)], {
    ...serverEnv,
    PORT: String(options.port + 1),
    NEXTAUTH_URL: bases.app,
    NEXTAUTH_SECRET: authSecret,
    NEXT_TELEMETRY_DISABLED: "1",
  });
  cleanups.push(plainNext.stop);
  const bare = startProcess("bare node:http", process.execPath, ["-e", BARE_SERVER, String(options.port + 2)], {});
  cleanups.push(bare.stop);
  await Promise.all([waitForHealth(bases.next, plainNext), waitForHealth(bases.bare, bare)]);
  // SQLite's token cache (src/db/fast-sql.ts) off: what a bearer read costs when it misses.
  const uncached = bases.uncached ? startProcess("npm start, no token cache", process.execPath, startArguments(ROOT), { ...serverEnv, ...startEnvironment(ROOT), PORT: String(options.port + 3), TOKEN_CACHE_SIZE: "0" }) : null;
  if (uncached) {
    cleanups.push(uncached.stop);
    await waitForHealth(bases.uncached!, uncached);
  }

  const fixtures = await createFixtures();
  const { scenarios, bearer } = await buildScenarios(bases, fixtures, options.connections);
  scenarios.push(...(await issuanceScenarios(bases, fixtures, options)));
  scenarios.push(...(await collectionScenarios(bases.app, bearer, bases.uncached))); // (collection reads)
  await warmUp(scenarios);
  // --- Memory (docs/benchmarks.md#memory): the server's resident memory once started and warmed up, before any load.
  await new Promise((resolve) => setTimeout(resolve, 2_000)); // let the warm-up's garbage be collected
  const idleRss = groupRss(app.child.pid!);
  // --- end of Memory

  const groups: ServerGroups = { [bases.app]: app.child.pid!, [bases.next]: plainNext.child.pid!, [bases.bare]: bare.child.pid! };
  if (uncached) groups[bases.uncached!] = uncached.child.pid!;
  const lookups = bases.uncached ?? bases.app; // the scale runs' server: every bearer read a lookup
  // The GET scenarios (the health checks and bearer reads that the ratios compare) take turns in slices; so do
  // the password grant and the raw argon2id verify rate (measured here while the servers are idle, as many
  // at once as the server hashes). Introspection and refresh run whole, one after the other (a refresh chain
  // lives as long as its autocannon run).
  const rounds = interleavedRounds(options.duration);
  const slice = options.duration / rounds;
  const { hashingSlots } = await import("../src/users/passwords");
  const { env } = await import("../src/env");
  const slots = hashingSlots(env()) * options.workers; // every process's share
  const stored = await rawVerifyHash(slots);
  const interleaved = (scenario: Scenario) => scenario.method === "GET" || scenario.name === "password grant";
  const slices = new Map<Scenario, Figures[]>(scenarios.map((scenario) => [scenario, []]));
  const rawRates: number[] = [];
  const rawCpu = { us: 0, done: 0 };
  const run = async (scenario: Scenario, seconds: number) => {
    const { result, cpuMs, databaseMs } = await measure(scenario, options, groups, seconds);
    slices.get(scenario)!.push(figures(scenario, result, scenario.connections ?? options.connections, cpuMs, databaseMs));
  };
  const say = (scenario: Scenario, how: string) =>
    console.error(`  ${scenario.name}: ${scenario.method} ${scenario.base}${scenario.path}, ${scenario.connections ?? options.connections} connections, ${how}`);
  const gets = scenarios.filter((scenario) => scenario.method === "GET");
  for (const scenario of gets) say(scenario, `${WARM_UP_SECONDS} s to warm up, then ${rounds} x ${round(slice, 1)} s, taking turns`);
  // Under load, unmeasured: V8 compiles a hot path's optimised code only after many requests (a bearer read
  // cost 57 µs of CPU in its first 4 s and 49-51 after), and a measurement should not include that.
  for (const scenario of gets) await measure(scenario, options, {}, WARM_UP_SECONDS);
  for (let i = 0; i < rounds; i++) for (const scenario of gets) await run(scenario, slice);
  for (const scenario of scenarios.filter((s) => !interleaved(s))) {
    await scenario.prepare?.();
    say(scenario, scenario.amount ? `${scenario.amount()} requests` : `${options.duration} s`);
    await run(scenario, options.duration);
  }
  const password = scenarios.find((scenario) => scenario.name === "password grant")!;
  say(password, `${WARM_UP_SECONDS} s to warm up, then ${rounds} x ${round(slice, 1)} s, taking turns with the raw argon2id verify rate (${slots} at once)`);
  // Unmeasured, as for the GETs: the server's hashing threads start with its first password grant, and V8
  // optimises the grant's path only after many requests (the raw rate's threads were warmed the same way).
  await measure(password, options, {}, WARM_UP_SECONDS);
  for (let i = 0; i < rounds; i++) {
    await run(password, slice);
    const raw = await rawVerifyRate(stored, slots, slice);
    rawRates.push(raw.rate);
    rawCpu.us += raw.cpuUs;
    rawCpu.done += raw.done;
  }
  const rawCpuUs = rawCpu.done > 0 ? rawCpu.us / rawCpu.done : null;
  const rawRate = rawRates.reduce((total, rate) => total + rate, 0) / rawRates.length;
  const rows: Figures[] = scenarios.map((scenario) => mergeFigures(slices.get(scenario)!));
  console.error(
    `  sign-in under a flood: POST ${bases.app}${TOKEN_PATH} at ${LEGITIMATE_CONNECTIONS} connection, ${options.duration} s alone, then ${options.duration} s ` +
      `while ${FLOOD_CONNECTIONS} connections POST ${SIGNIN_CALLBACK_PATH} with random e-mails and addresses`,
  );
  const underFlood = await signInUnderFlood(bases, fixtures, options, groups, options.duration);
  rows.push(underFlood.idle, underFlood.underFlood, underFlood.flood);

  let scale: { small: Figures; large: Figures } | null = null;
  if (options.scale) {
    const userPath = `/api/user/${fixtures.userId}/`;
    console.error(`  scale: seeding ${SMALL_TOKENS} access tokens`);
    await seedTokens(database, fixtures, 0, SMALL_TOKENS);
    const small = rotatingBearer(`bearer read, ${SMALL_TOKENS} tokens`, lookups, userPath, sampleTokens(SMALL_TOKENS));
    await warmUp([small]);
    console.error(`  ${small.name}: ${options.duration} s`);
    const smallRun = await measure(small, options, groups);
    const smallFigures = figures(small, smallRun.result, options.connections, smallRun.cpuMs);
    console.error(`  scale: seeding up to ${SCALE_TOKENS.toLocaleString("en")} access tokens`);
    await seedTokens(database, fixtures, SMALL_TOKENS, SCALE_TOKENS);
    const large = rotatingBearer(`bearer read, ${SCALE_TOKENS} tokens`, lookups, userPath, sampleTokens(SCALE_TOKENS));
    await warmUp([large]);
    console.error(`  ${large.name}: ${options.duration} s`);
    const largeRun = await measure(large, options, groups);
    scale = { small: smallFigures, large: figures(large, largeRun.result, options.connections, largeRun.cpuMs) };
    rows.push(scale.small, scale.large);
  }
  const rss = groupRss(app.child.pid!);

  // --- Targets (docs/benchmarks.md), from this one run
  const rps = (name: string) => rows.find((row) => row.scenario === name)!.requests_per_second;
  const bearerRow = rows.find((row) => row.scenario === "bearer read @16")!;
  const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
  const refreshTarget = database.kind === "sqlite" ? 1000 : 700;
  const targets: Target[] = [
    { target: "health: npm start >= 5x next start", measured: `${ratio(rps("health: npm start"), rps("health: next start")).toFixed(2)}x`, pass: ratio(rps("health: npm start"), rps("health: next start")) >= 5 },
    { target: "bearer read >= 0.8x npm start health", measured: `${ratio(rps("bearer read"), rps("health: npm start")).toFixed(2)}x`, pass: ratio(rps("bearer read"), rps("health: npm start")) >= 0.8 },
    { target: "bearer read >= 0.15x bare node:http", measured: `${ratio(rps("bearer read"), rps("health: bare node:http")).toFixed(3)}x`, pass: ratio(rps("bearer read"), rps("health: bare node:http")) >= 0.15 },
    { target: `refresh rotations >= ${refreshTarget}/s (${database.kind})`, measured: `${rps("refresh rotation").toFixed(0)}/s`, pass: rps("refresh rotation") >= refreshTarget },
    passwordTarget(rows, rawRate, rawCpuUs),
    { target: "bearer read p99 < 50 ms at 16 connections", measured: `${bearerRow.latency_ms.p99} ms`, pass: bearerRow.latency_ms.p99 < 50 },
  ];
  targets.push(...collectionTargets(rows)); // (collection reads)
  {
    const { idle, underFlood: flooded, flood } = underFlood;
    const refused = (flood.status_codes["429"] ?? 0) + (flood.status_codes["503"] ?? 0);
    targets.push(
      {
        target: "password grant p99 under a sign-in flood <= 3x idle",
        measured:
          `${flooded.latency_ms.p99} ms vs ${idle.latency_ms.p99} ms idle (${ratio(flooded.latency_ms.p99, idle.latency_ms.p99).toFixed(1)}x; ` +
          `p50 ${flooded.latency_ms.p50} vs ${idle.latency_ms.p50} ms; grant statuses ${statusCounts(flooded)})`,
        pass: flooded.latency_ms.p99 <= 3 * idle.latency_ms.p99 && flooded.errors === 0 && flooded.non_2xx === 0,
      },
      {
        target: "sign-in flood refused with 429 or 503, not queued",
        measured: `${refused} of ${flood.requests_completed} refused (statuses ${statusCounts(flood)}; errors ${flood.errors})`,
        pass: refused > 0 && Object.keys(flood.status_codes).every((code) => ["401", "429", "503"].includes(code)),
      },
    );
  }
  targets.push(...issuanceTargets(rows, database.kind));
  // --- Memory (docs/benchmarks.md#memory): one process (WORKERS=1), the compiled server.
  const totalMiB = (processes: typeof rss) => round(processes.reduce((sum, p) => sum + p.rssMiB, 0), 1);
  if (options.workers === 1) {
    targets.push(
      { target: `server RSS idle <= ${RSS_IDLE_TARGET_MIB} MiB`, measured: `${totalMiB(idleRss)} MiB`, pass: totalMiB(idleRss) <= RSS_IDLE_TARGET_MIB },
      { target: `server RSS after the run <= ${RSS_AFTER_TARGET_MIB} MiB`, measured: `${totalMiB(rss)} MiB`, pass: totalMiB(rss) <= RSS_AFTER_TARGET_MIB },
    );
  }
  // --- end of Memory
  if (scale) {
    const cost = ratio(scale.small.requests_per_second, scale.large.requests_per_second);
    targets.push({ target: `lookup at ${SCALE_TOKENS.toLocaleString("en")} tokens <= 1.2x at ${SMALL_TOKENS.toLocaleString("en")}`, measured: `${cost.toFixed(2)}x`, pass: cost <= 1.2 });
  }
  // The flood is refused by design, and the grant under it is judged by its target (statuses included).
  const floodRows = new Set([underFlood.underFlood, underFlood.flood]);
  const failedRows = rows.filter((row) => !floodRows.has(row) && (row.non_2xx || row.errors));

  console.log(
    `\n${database.kind}, WORKERS=${options.workers}, ${options.connections} connections (unless shown), ${options.duration} s per scenario ` +
      `(GETs and the password grant in ${rounds} slices taking turns), ` +
      `node ${process.version}, ${cpus().length} CPUs, load average before: ${load.join(" ")}\n`,
  );
  console.log(table(rows));
  console.log(`\nraw argon2id verify rate: ${rawRate.toFixed(1)}/s (${slots} at once)`);
  console.log(`npm start RSS idle (started, warmed up): ${idleRss.map((p) => `${p.rssMiB} MiB (pid ${p.pid}: ${p.command})`).join("; ")}`);
  console.log(`npm start RSS after the run: ${rss.map((p) => `${p.rssMiB} MiB (pid ${p.pid}: ${p.command})`).join("; ")}`);
  console.log(`                      total: ${round(rss.reduce((sum, p) => sum + p.rssMiB, 0), 1)} MiB\n`);
  const width = Math.max(...targets.map((t) => t.target.length));
  for (const t of targets) console.log(`${t.pass ? "PASS" : "FAIL"}  ${t.target.padEnd(width)}  ${t.measured}`);
  // The same comparisons by the servers' own CPU time per request, which other load on the machine disturbs
  // less than req/s.
  const cpu = (name: string) => rows.find((row) => row.scenario === name)?.server_cpu_us_per_request ?? null;
  /** Throughput of scenario `a` relative to `b` on a core of its own: b's CPU per request over a's. */
  const throughputRatio = (a: string, b: string) => {
    const [costA, costB] = [cpu(a), cpu(b)];
    return costA && costB ? (costB / costA).toFixed(3) : "-";
  };
  console.log("\nThe same ratios by the servers' CPU time per request (less disturbed by other load):");
  console.log(`  health: npm start vs next start   ${throughputRatio("health: npm start", "health: next start")}x`);
  console.log(`  bearer read vs npm start health   ${throughputRatio("bearer read", "health: npm start")}x`);
  console.log(`  bearer read vs bare node:http     ${throughputRatio("bearer read", "health: bare node:http")}x`);
  if (cpu("bearer read, no token cache") !== null) {
    console.log(`  the same without the token cache  ${throughputRatio("bearer read, no token cache", "health: npm start")}x (npm start health), ${throughputRatio("bearer read, no token cache", "health: bare node:http")}x (bare node:http)`);
  }

  const report = {
    created_at: startedAt.toISOString(),
    commit: gitCommit(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpus().length,
    available_parallelism: availableParallelism(),
    load_average_before: load,
    database: database.kind,
    workers: options.workers,
    connections: options.connections,
    duration_seconds: options.duration,
    interleaved_rounds: rounds,
    scenarios: rows,
    raw_argon2id_verify_per_second: round(rawRate, 1),
    raw_argon2id_cpu_us_per_verify: rawCpuUs === null ? null : round(rawCpuUs, 1),
    hashing_slots: slots,
    sign_in_under_flood: {
      flood_connections: FLOOD_CONNECTIONS,
      grant_connections: LEGITIMATE_CONNECTIONS,
      grant_idle_ms: { p50: underFlood.idle.latency_ms.p50, p99: underFlood.idle.latency_ms.p99 },
      grant_under_flood_ms: { p50: underFlood.underFlood.latency_ms.p50, p99: underFlood.underFlood.latency_ms.p99 },
      grant_statuses_under_flood: underFlood.underFlood.status_codes,
      flood_statuses: underFlood.flood.status_codes,
      flood_client_addresses: "random X-Forwarded-For per request, TRUST_PROXY=1",
    },
    rss_idle: idleRss,
    rss_after_run: rss,
    targets,
  };
  const dir = join(ROOT, "bench-results");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${database.kind}-${stamp}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  console.log(`\nFigures written to ${file}`);

  if (failedRows.length) {
    console.error(`Some requests failed (non-2xx or errors) in: ${failedRows.map((row) => row.scenario).join(", ")}; those figures are not comparable.`);
    console.error(app.output());
    process.exitCode = 1;
  }
  if (targets.some((t) => !t.pass)) process.exitCode = 1;
}

try {
  await main();
} catch (error) {
  console.error(`bench: ${(error as Error).stack ?? (error as Error).message}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
