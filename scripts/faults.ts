// npm run test:faults (docs/operations.md): the production build (`node dist/server.js start`, the custom server) on
// PostgreSQL, driven from outside through three faults, each checked as an operator would:
//   1. PostgreSQL stopped and started again under load: every answer is a 2xx, 4xx or 503 (never a 500, never
//      a dropped connection), each within 10 s; the service recovers by itself; every 201 is still there.
//   2. Resend played by a local stand-in (RESEND_BASE_URL) that fails, then recovers: every mail written
//      during the outage reaches it exactly once after it ends.
//   3. SIGTERM with requests in flight: every one is answered, and the server exits 0.
// It prints what it held, and exits 1 at the first broken promise.
//
// Environment: FAULTS_DATABASE_URL (default postgresql://app:app@localhost:5440/app_faults; its public schema
// is emptied), FAULTS_PG_CLUSTER (default "15 faults": `pg_ctlcluster <version> <name> stop|start`, as root),
// FAULTS_PORT (3362) and FAULTS_MAIL_PORT (3363). Run `npm run build` first.
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startArguments, startEnvironment } from "./start-command";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DATABASE_URL = process.env.FAULTS_DATABASE_URL ?? "postgresql://app:app@localhost:5440/app_faults";
const [PG_VERSION, PG_CLUSTER] = (process.env.FAULTS_PG_CLUSTER ?? "15 faults").split(/\s+/);
const PORT = Number(process.env.FAULTS_PORT ?? 3362);
const MAIL_PORT = Number(process.env.FAULTS_MAIL_PORT ?? 3363);
const BASE = `http://localhost:${PORT}`;
const ANSWER_WITHIN_MS = 10_000;

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)}s`;
const say = (line: string) => console.log(`[faults ${elapsed()}] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Broken extends Error {}
function hold(condition: boolean, promise: string, details: unknown = ""): void {
  if (!condition) throw new Broken(`${promise}${details === "" ? "" : `: ${typeof details === "string" ? details : JSON.stringify(details)}`}`);
  say(`held: ${promise}`);
}

function pgCluster(action: "start" | "stop"): void {
  execFileSync("pg_ctlcluster", [PG_VERSION!, PG_CLUSTER!, action, ...(action === "stop" ? ["-m", "fast"] : [])], { stdio: "inherit" });
}

async function emptyDatabase(): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query("DROP SCHEMA IF EXISTS public CASCADE");
  await client.query("CREATE SCHEMA public");
  await client.end();
}

// --- the stand-in for Resend's API ----------------------------------------------------------------------

type MailStandIn = { server: Server; failing: boolean; attempts: Map<string, number[]>; accepted: Map<string, number> };

async function startMailStandIn(): Promise<MailStandIn> {
  const standIn: MailStandIn = { server: undefined as unknown as Server, failing: false, attempts: new Map(), accepted: new Map() };
  standIn.server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const key = String(req.headers["idempotency-key"] ?? "none");
      standIn.attempts.set(key, [...(standIn.attempts.get(key) ?? []), performance.now()]);
      res.setHeader("Content-Type", "application/json");
      if (standIn.failing) {
        res.statusCode = 503;
        res.end(JSON.stringify({ statusCode: 503, name: "application_error", message: "the stand-in plays an outage" }));
        return;
      }
      standIn.accepted.set(key, (standIn.accepted.get(key) ?? 0) + 1);
      res.end(JSON.stringify({ id: `re_${key}` }));
    });
  });
  await new Promise<void>((resolve) => standIn.server.listen(MAIL_PORT, "127.0.0.1", resolve));
  return standIn;
}

// --- the server -----------------------------------------------------------------------------------------

const serverEnv = {
  ...process.env,
  NODE_ENV: "production",
  PORT: String(PORT),
  APP_URL: BASE,
  DATABASE_URL,
  AUTH_SECRET: "faults-secret-faults-secret-faults-secret",
  RESEND_API_KEY: "re_faults_stand_in",
  RESEND_BASE_URL: `http://127.0.0.1:${MAIL_PORT}`,
  LOG_LEVEL: "error",
  DEV_MAILBOX: "0",
} as NodeJS.ProcessEnv;

function startServer(): ChildProcess {
  const child = spawn(process.execPath, startArguments(ROOT), { cwd: ROOT, env: { ...serverEnv, ...startEnvironment(ROOT) }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (chunk: Buffer) => process.stdout.write(`  [server] ${chunk}`));
  child.stderr!.on("data", (chunk: Buffer) => process.stdout.write(`  [server] ${chunk}`));
  return child;
}

async function waitReady(timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const status = await fetch(`${BASE}/api/ready`).then((r) => r.status, () => 0);
    if (status === 200) return;
    await sleep(250);
  }
  throw new Broken(`the server was not ready within ${timeoutMs / 1000} s`);
}

async function cli<T>(...args: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)("node_modules/.bin/tsx", ["src/cli/main.ts", ...args, "--json"], { cwd: ROOT, env: serverEnv, encoding: "utf8" });
  return JSON.parse(stdout) as T;
}

type Account = { id: number; email: string; token: string };

async function account(name: string): Promise<Account> {
  const email = `${name}-${Date.now()}@faults.test`;
  const user = await cli<{ id: number }>("user:create", "--email", email, "--password", "faults password 123", "--name", name);
  const client = await cli<{ client_id: string; client_secret: string }>("client:create", "--owner", email, "--name", `${name}'s script`, "--grant", "password");
  const response = await fetch(`${BASE}/api/connect/oauth2/token/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: email, password: "faults password 123", scope: "readonly readwrite" }),
  });
  const body = (await response.json()) as { access_token: string };
  return { id: user.id, email, token: body.access_token };
}

type Outcome = { status: number; ms: number; error?: string; created?: number };

async function timed(run: () => Promise<Response>, created = false): Promise<Outcome> {
  const t = performance.now();
  try {
    const response = await run();
    const text = await response.text();
    const outcome: Outcome = { status: response.status, ms: performance.now() - t };
    if (created && response.status === 201) outcome.created = (JSON.parse(text) as { id: number }).id;
    return outcome;
  } catch (error) {
    return { status: 0, ms: performance.now() - t, error: String((error as Error).cause ?? error) };
  }
}

// --- 1. PostgreSQL stopped and started under load --------------------------------------------------------

async function databaseRestart(user: Account): Promise<void> {
  say(`fault 1: PostgreSQL cluster ${PG_VERSION} ${PG_CLUSTER} stopped and started under load`);
  const outcomes: Outcome[] = [];
  let running = true;
  const auth = { authorization: `Bearer ${user.token}` };
  const worker = async (n: number) => {
    for (let i = 0; running; i++) {
      const outcome =
        i % 2 === 0
          ? await timed(() => fetch(`${BASE}/api/bundle/`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ name: `load ${n}.${i}` }) }), true)
          : await timed(() => fetch(`${BASE}/api/user/${user.id}/`, { headers: auth }));
      outcomes.push(outcome);
      if (outcome.status === 503) await sleep(50);
    }
  };
  const load = Promise.all(Array.from({ length: 8 }, (_, n) => worker(n)));
  await sleep(2_000);
  say("stopping PostgreSQL");
  pgCluster("stop");
  const stoppedAt = outcomes.length;
  await sleep(1_000);
  // A page that reads the database answers at once with Next's error document, from which the browser renders
  // the friendly page (app/error.tsx, app/global-error.tsx: client components, so the text itself comes with
  // the page's scripts).
  const page = await fetch(`${BASE}/verify-email?token=faults-check`);
  const html = await page.text();
  hold(page.status >= 500 && html.includes('id="__next_error__"'), "a page that needs the database answers Next's error page (5xx) while it is down, not a hang", page.status);
  await sleep(3_000);
  say("starting PostgreSQL");
  pgCluster("start");
  // Recovered: a write answers 201 again, by itself (no restart of the server).
  const recoveryStarted = performance.now();
  let recovered = false;
  while (!recovered && performance.now() - recoveryStarted < 30_000) {
    await sleep(250);
    recovered = outcomes.slice(-8).some((outcome) => outcome.status === 201);
  }
  await sleep(2_000);
  running = false;
  await load;

  const byStatus: Record<string, number> = {};
  for (const outcome of outcomes) byStatus[outcome.status] = (byStatus[outcome.status] ?? 0) + 1;
  say(`${outcomes.length} requests: ${JSON.stringify(byStatus)}; slowest ${Math.max(...outcomes.map((o) => o.ms)).toFixed(0)} ms`);
  const bad = outcomes.filter((outcome) => !((outcome.status >= 200 && outcome.status < 300) || (outcome.status >= 400 && outcome.status < 500) || outcome.status === 503));
  hold(bad.length === 0, "every answer was a 2xx, 4xx or 503 (no 500, no dropped connection)", bad.slice(0, 5));
  hold(outcomes.slice(stoppedAt).some((outcome) => outcome.status === 503), "the outage was seen: 503s while PostgreSQL was down");
  const slow = outcomes.filter((outcome) => outcome.ms > ANSWER_WITHIN_MS);
  hold(slow.length === 0, `every answer came within ${ANSWER_WITHIN_MS / 1000} s`, slow.slice(0, 5));
  hold(recovered, "the service recovered by itself once PostgreSQL was back");
  const created = outcomes.map((outcome) => outcome.created).filter((id): id is number => id !== undefined);
  const missing: number[] = [];
  for (const id of created) {
    const response = await fetch(`${BASE}/api/bundle/${id}/`, { headers: auth });
    if (response.status !== 200) missing.push(id);
  }
  hold(missing.length === 0, `every one of the ${created.length} bundles answered 201 is still there`, missing);
}

// --- 2. the mail provider fails, then recovers ----------------------------------------------------------

async function mailOutage(standIn: MailStandIn, owner: Account, requester: Account): Promise<void> {
  say("fault 2: the mail provider (a local stand-in for Resend) fails, then recovers");
  standIn.failing = true;
  const before = new Set(standIn.attempts.keys());
  const requests = 3;
  for (let i = 0; i < requests; i++) {
    const bundle = await fetch(`${BASE}/api/bundle/`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `mail outage ${i}` }),
    });
    const { id } = (await bundle.json()) as { id: number };
    const asked = await fetch(`${BASE}/api/bundle_permission_request/`, {
      method: "POST",
      headers: { authorization: `Bearer ${requester.token}`, "content-type": "application/json" },
      body: JSON.stringify({ bundle: id, user_allowed: requester.email, user_target: owner.email }),
    });
    hold(asked.status === 201, `permission request ${i + 1} of ${requests} was accepted (201) while the provider was down`, await asked.text());
  }
  // The attempt right after each response fails.
  const deadline = performance.now() + 10_000;
  const fresh = () => [...standIn.attempts.keys()].filter((key) => !before.has(key));
  while (fresh().length < requests && performance.now() < deadline) await sleep(100);
  hold(fresh().length === requests, "each mail was tried at once and refused by the failing provider", fresh());
  standIn.failing = false;
  say("the provider is back");
  const failedAt = performance.now();
  while (fresh().filter((key) => standIn.accepted.has(key)).length < requests && performance.now() - failedAt < 90_000) await sleep(250);
  const delivered = fresh().filter((key) => standIn.accepted.has(key));
  say(`delivered ${delivered.length} of ${requests} within ${((performance.now() - failedAt) / 1000).toFixed(0)} s of the provider's return`);
  hold(delivered.length === requests, "every mail written during the outage was delivered after it (within 90 s)");
  await sleep(20_000); // more sweeps (every 15 s): nothing may be sent again
  // After a failure the first retry is due within a minute (docs/rules/operations.md#mail-delivery).
  const retryGaps = fresh().map((key) => {
    const times = standIn.attempts.get(key)!;
    return times.length > 1 ? Math.round((times[1]! - times[0]!) / 1000) : Infinity;
  });
  say(`seconds from each mail's failed attempt to its retry: ${JSON.stringify(retryGaps)}`);
  hold(retryGaps.every((gap) => gap <= 60), "each retry came within 60 s of the failure");
  const counts = fresh().map((key) => standIn.accepted.get(key) ?? 0);
  hold(counts.every((count) => count === 1), "each mail was accepted exactly once", counts);
}

// --- 3. SIGTERM with requests in flight ------------------------------------------------------------------

async function sigtermUnderLoad(server: ChildProcess, user: Account): Promise<void> {
  say("fault 3: SIGTERM with 16 requests in flight");
  const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
  const inFlight = Array.from({ length: 16 }, (_, i) =>
    timed(() =>
      i % 2 === 0
        ? fetch(`${BASE}/api/bundle/`, { method: "POST", headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" }, body: JSON.stringify({ name: `sigterm ${i}` }) })
        : fetch(`${BASE}/api/user/${user.id}/`, { headers: { authorization: `Bearer ${user.token}` } }),
    ),
  );
  await sleep(30); // the requests are on their way (their connections are open)
  server.kill("SIGTERM");
  const outcomes = await Promise.all(inFlight);
  const statuses = outcomes.map((outcome) => outcome.status);
  say(`answers: ${JSON.stringify(statuses)}`);
  hold(outcomes.every((outcome) => outcome.status === 200 || outcome.status === 201), "every request in flight at SIGTERM was answered (none cut off)", outcomes.filter((o) => o.status === 0));
  const code = await Promise.race([exited, sleep(15_000).then(() => "timeout" as const)]);
  hold(code === 0, "the server exited 0 after finishing them", code);
}

// --- the run --------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!existsSync(`${ROOT}/.next/BUILD_ID`) || !existsSync(`${ROOT}/dist/server.js`)) throw new Broken("no production build: run `npm run build` first");
  say(`database ${DATABASE_URL.replace(/:[^:@/]+@/, ":***@")}, cluster ${PG_VERSION} ${PG_CLUSTER}, server port ${PORT}, mail stand-in port ${MAIL_PORT}`);
  await emptyDatabase();
  const standIn = await startMailStandIn();
  const server = startServer();
  let serverExited = false;
  server.once("exit", () => (serverExited = true));
  try {
    await waitReady(90_000);
    say("server ready");
    const [owner, requester] = await Promise.all([account("owner"), account("requester")]);
    await databaseRestart(owner);
    await mailOutage(standIn, owner, requester);
    await sigtermUnderLoad(server, owner);
    say(`all faults held in ${elapsed()}`);
  } finally {
    if (!serverExited) server.kill("SIGKILL");
    standIn.server.close();
  }
}


main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`[faults ${elapsed()}] BROKEN: ${error instanceof Broken ? error.message : String((error as Error).stack ?? error)}`);
    try {
      execFileSync("pg_ctlcluster", [PG_VERSION!, PG_CLUSTER!, "start"], { stdio: "ignore" }); // leave the cluster running
    } catch {
      // it was running
    }
    process.exit(1);
  },
);
