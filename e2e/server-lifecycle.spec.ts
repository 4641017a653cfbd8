// `npm start` as an operator runs it (docs/rules/operations.md#shutdown, docs/rules/operations.md#workers):
// graceful shutdown with requests in flight, WORKERS, and the client address, each on a server this spec
// starts and stops itself (its own port, E2E_PORT + 100 unless E2E_LIFECYCLE_PORT is set, and its own SQLite
// file), since the suite's own server must keep running.
import { expect, test } from "@playwright/test";
import Database from "better-sqlite3";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { connect } from "node:net";
import { resolve } from "node:path";
import { startArguments, startEnvironment } from "../scripts/start-command";
import { e2eEnv } from "./env";

const PORT = Number(process.env.E2E_LIFECYCLE_PORT ?? Number(e2eEnv.PORT) + 100);
const BASE = `http://127.0.0.1:${PORT}`;
const PASSWORD = "lifecycle password 123";

test.describe.configure({ mode: "serial", timeout: 120_000 });

type Server = { child: ChildProcess; output: string[]; exited: Promise<number | null>; env: Record<string, string>; databaseFile: string };

async function startServer(workers: number): Promise<Server> {
  mkdirSync(resolve(".data/e2e"), { recursive: true });
  const databaseFile = resolve(`.data/e2e/lifecycle-${Date.now()}-${randomBytes(3).toString("hex")}.db`);
  const env = {
    ...e2eEnv,
    PORT: String(PORT),
    APP_URL: BASE,
    DATABASE_URL: `file:${databaseFile}`,
    WORKERS: String(workers),
    LOG_LEVEL: "info",
  };
  const child = spawn(process.execPath, startArguments(), {
    env: { ...process.env, ...startEnvironment(), ...env } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout!.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  for (let waited = 0; ; waited += 200) {
    if (child.exitCode !== null) throw new Error(`the server exited during start-up:\n${output.join("")}`);
    if (waited > 60_000) throw new Error(`the server did not start:\n${output.join("")}`);
    const ready = await fetch(`${BASE}/api/ready`).then((r) => r.status, () => 0);
    if (ready === 200 && output.join("").split("Ready on").length - 1 >= workers) break;
    await new Promise((done) => setTimeout(done, 200));
  }
  return { child, output, exited, env, databaseFile };
}

function cli<T>(server: Server, ...args: string[]): T {
  const out = execFileSync("node_modules/.bin/tsx", ["src/cli/main.ts", ...args, "--json"], { env: { ...process.env, ...server.env } as NodeJS.ProcessEnv, encoding: "utf8" });
  return JSON.parse(out) as T;
}

function passwordClient(server: Server) {
  const email = `lifecycle-${randomBytes(4).toString("hex")}@example.test`;
  const user = cli<{ id: number }>(server, "user:create", "--email", email, "--password", PASSWORD);
  const client = cli<{ client_id: string; client_secret: string }>(server, "client:create", "--owner", email, "--name", "Lifecycle", "--grant", "password");
  return { user, email, client };
}

const tokenRequest = (body: Record<string, string>) =>
  fetch(`${BASE}/api/connect/oauth2/token/`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

/** Fires `count` password grants, sends SIGTERM to the server while they are in flight, and reports. */
async function shutDownUnderLoad(server: Server, count: number) {
  const { email, client } = passwordClient(server);
  const grant = { grant_type: "password", username: email, password: PASSWORD, client_id: client.client_id, client_secret: client.client_secret };
  let signalledAt = 0;
  let firstAnswered: () => void = () => {};
  const first = new Promise<void>((done) => (firstAnswered = done));
  const requests = Array.from({ length: count }, () =>
    tokenRequest(grant).then(
      async (response) => {
        firstAnswered();
        return { status: response.status, body: (await response.json()) as Record<string, unknown>, after: signalledAt > 0 };
      },
      (error: Error) => {
        firstAnswered();
        return { status: 0, body: { failed: String(error.cause ?? error) } as Record<string, unknown>, after: signalledAt > 0 };
      },
    ),
  );
  // The signal goes out when the first grant has been answered: each grant hashes for several milliseconds, at
  // most one per core at a time, so the server then still holds most of the others (however fast the machine).
  await first;
  signalledAt = performance.now();
  server.child.kill("SIGTERM");
  // The server says how many requests it holds, and once it has stopped accepting, a new connection is refused.
  const linesSaying = (message: string) =>
    server.output
      .join("")
      .split("\n")
      .filter((text) => text.includes(`"message":"${message}"`))
      .map((text) => JSON.parse(text) as { inFlight?: number });
  const logLine = async (message: string) => {
    for (let waited = 0; waited < 10_000; waited += 10) {
      const [line] = linesSaying(message);
      if (line) return line;
      await new Promise((done) => setTimeout(done, 10));
    }
    return null;
  };
  const draining = await logLine("shutting down: finishing requests in flight");
  await logLine("no longer accepting connections");
  const probe = await new Promise<string>((done) => {
    const socket = connect(PORT, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      done("accepted");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code === "ECONNREFUSED" ? "refused" : String(error.code)));
  });
  const results = await Promise.all(requests);
  const code = await server.exited;
  if (results.some((result) => result.status !== 200) || code !== 0) console.log(server.output.join(""));
  // Every serving process says what it held (with WORKERS, each worker its own share).
  const held = linesSaying("shutting down: finishing requests in flight").reduce((total, line) => total + (line.inFlight ?? 0), 0);
  return { results, code, probe, inFlightAtSignal: draining ? held : 0 };
}

test("SIGTERM lets the requests in flight finish, refuses new connections, and exits 0", async () => {
  const server = await startServer(1);
  const { results, code, probe, inFlightAtSignal } = await shutDownUnderLoad(server, 16);
  for (const result of results) {
    expect(result.status).toBe(200);
    expect(result.body.token_type).toBe("Bearer");
  }
  // They were in flight: the server held some when the signal came, and answers arrived after it.
  expect(inFlightAtSignal).toBeGreaterThan(0);
  expect(results.filter((result) => result.after).length).toBeGreaterThan(0);
  expect(probe).toBe("refused");
  expect(code).toBe(0);
});

test("with WORKERS=2: single use holds across workers, and SIGTERM to the primary drains both and exits 0", async () => {
  const server = await startServer(2);
  expect(server.output.join("").match(/Ready on .*worker \d+/g)).toHaveLength(2);
  // docs/rules/tokens.md#client-id-metadata-documents: the e2e environment sets the insecure origin, and every
  // process that serves says so at start.
  expect(server.output.join("").match(/"message":"CLIENT_ID_METADATA_INSECURE_ORIGIN is set: [^"]*never set it in production"/g)?.length).toBeGreaterThanOrEqual(1);
  const { email, client } = passwordClient(server);
  const auth = { client_id: client.client_id, client_secret: client.client_secret };
  const first = (await (await tokenRequest({ grant_type: "password", username: email, password: PASSWORD, ...auth })).json()) as { refresh_token: string };
  // Ten uses of one refresh token at once, on ten connections that the primary spreads over both workers.
  const uses = await Promise.all(
    Array.from({ length: 10 }, () => tokenRequest({ grant_type: "refresh_token", refresh_token: first.refresh_token, ...auth }).then(async (r) => ({ status: r.status, body: await r.json() }))),
  );
  expect(uses.filter((use) => use.status === 200)).toHaveLength(1);
  for (const use of uses.filter((u) => u.status !== 200)) expect(use).toEqual({ status: 400, body: { error: "invalid_grant" } });

  const { results, code, inFlightAtSignal } = await shutDownUnderLoad(server, 16);
  for (const result of results) expect(result.status).toBe(200);
  expect(inFlightAtSignal).toBeGreaterThan(0);
  expect(results.filter((result) => result.after).length).toBeGreaterThan(0);
  expect(code).toBe(0);
  expect(server.output.join("")).toContain("stopping: no new connections; workers finish what they hold");
  expect(server.output.join("").match(/"message":"shut down"/g)).toHaveLength(2);
});

test("with TRUST_PROXY=0 a client's X-Forwarded-For does not change the address the service records", async () => {
  const server = await startServer(1);
  const { user, email, client } = passwordClient(server);
  const auth = { client_id: client.client_id, client_secret: client.client_secret };
  const first = (await (await tokenRequest({ grant_type: "password", username: email, password: PASSWORD, ...auth })).json()) as { refresh_token: string };
  const refreshed = await fetch(`${BASE}/api/connect/oauth2/token/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Forwarded-For": "203.0.113.66" },
    body: JSON.stringify({ grant_type: "refresh_token", refresh_token: first.refresh_token, ...auth }),
  });
  expect(refreshed.status).toBe(200);
  server.child.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  // The audit log is where the service writes the address (docs/rules/operations.md#audit-log); read it as
  // stored.
  const sqlite = new Database(server.databaseFile, { readonly: true });
  const rows = sqlite.prepare(`SELECT "ip" FROM "AuditEvent" WHERE "type" = 'token.refreshed' AND "userId" = ?`).all(user.id);
  sqlite.close();
  expect(rows).toEqual([{ ip: "127.0.0.1" }]);
});
