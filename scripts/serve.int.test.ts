// docs/rules/operations.md#running: `npm run dev` creates and migrates its database on first start and seeds
// demo users and clients when it is empty; `npm start` applies pending migrations and never seeds. Both
// commands are run as a developer runs them, each on a new SQLite file of its own (a seed needs an empty
// database, and these tests must not touch the shared test database), on ports of this test suite.
import Database from "better-sqlite3";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const started: { child: ChildProcess; files: string[] }[] = [];
afterEach(async () => {
  for (const { child, files } of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const ended = new Promise((done) => child.once("exit", done));
      process.kill(-child.pid!, "SIGTERM"); // the npm process group: npm, tsx and the Next.js server it started
      const killer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 5_000);
      await ended;
      clearTimeout(killer);
    }
    for (const file of files) for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
  }
});

/** Runs `npm run <script>` on a new database; resolves when `until` is printed or the command ends. */
function npmRun(script: "dev" | "start", port: number, until: RegExp) {
  const file = join(process.env.TEST_SCRATCH_DIR!, `${script}-${process.pid}-${randomBytes(4).toString("hex")}.db`);
  // NODE_ENV is left out: npm run dev and npm start decide it, as they do for a developer.
  const { NODE_ENV: _testMode, ...inherited } = process.env;
  const env = { ...inherited, DATABASE_URL: `file:${file}`, PORT: String(port), APP_URL: "", AUTH_SECRET: "serve-test-secret-serve-test-secret-0123", NEXT_TELEMETRY_DISABLED: "1" } as unknown as NodeJS.ProcessEnv;
  // `npm start` runs the compiled server (node dist/server.js start, from `npm run build`); this suite runs
  // without a build, so it runs the TypeScript that dist/server.js is compiled from.
  const [command, args] = script === "start" ? [process.execPath, ["--import", "tsx", "scripts/serve.ts", "start"]] : ["npm", ["run", "-s", script]];
  const child = spawn(command, args, { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const demoFile = file.replace(/\.db$/, ".demo.env");
  started.push({ child, files: [file, demoFile] });
  let output = "";
  const done = new Promise<{ output: string; exited: boolean }>((resolveRun) => {
    const check = () => {
      if (until.test(output)) resolveRun({ output, exited: false });
    };
    child.stdout!.on("data", (chunk) => ((output += chunk), check()));
    child.stderr!.on("data", (chunk) => ((output += chunk), check()));
    child.on("exit", () => resolveRun({ output, exited: true }));
  });
  return { file, demoFile, done };
}

function readDatabase<T>(file: string, query: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, timeout: 5000 });
  try {
    return query(db);
  } finally {
    db.close();
  }
}

describe("npm run dev", () => {
  it("migrates a new database and seeds it with the demo users, a client of each grant type and a bundle", async () => {
    // A developer's own demo file (docs/testing.md#what-npm-test-leaves-alone): as it was before, or still absent.
    const developersFile = resolve(".data/demo.env");
    const before = existsSync(developersFile) ? readFileSync(developersFile, "utf8") : null;
    const run = npmRun("dev", 3336, /Demo data created[\s\S]*Try the device flow[\s\S]*oauth2\/device\/[^\n]*\n/);
    const { output, exited } = await run.done;
    expect(exited, output).toBe(false);
    expect(output).toMatch(/user +alice@example\.com +password \S+/);
    // What it prints, and the demo file beside its database, name the port it runs on
    // (docs/rules/operations.md#the-demo-file).
    expect(output).toContain(`Demo data created, for http://localhost:3336; saved in ${run.demoFile}`);
    expect(output).toMatch(/npm run example-client -- --client-id=\S+ --client-secret=\S+ --server=http:\/\/localhost:3336\n/);
    expect(output).toContain("curl -s http://localhost:3336/api/connect/oauth2/token/");
    expect(output).not.toContain("localhost:3000");
    expect(readFileSync(run.demoFile, "utf8")).toMatch(/^DEMO_URL='http:\/\/localhost:3336'$/m);
    expect(existsSync(developersFile) ? readFileSync(developersFile, "utf8") : null).toBe(before);
    const seeded = readDatabase(run.file, (db) => ({
      users: db.prepare(`SELECT email FROM "User" ORDER BY email`).all(),
      clients: db.prepare(`SELECT "grantType", "isPublic", "firstParty" FROM "Client" ORDER BY "grantType"`).all(),
      bundles: db.prepare(`SELECT name FROM "Bundle"`).all(),
    }));
    expect(seeded).toEqual({
      users: [{ email: "alice@example.com" }, { email: "bob@example.com" }, { email: "carol@example.com" }],
      clients: [
        { grantType: "authorization_code", isPublic: 0, firstParty: 0 },
        { grantType: "client_credentials", isPublic: 0, firstParty: 0 },
        { grantType: "device_code", isPublic: 1, firstParty: 0 },
        { grantType: "implicit", isPublic: 0, firstParty: 0 },
        { grantType: "password", isPublic: 0, firstParty: 0 },
        { grantType: "password", isPublic: 0, firstParty: 1 },
        { grantType: "password", isPublic: 0, firstParty: 0 },
      ],
      bundles: [{ name: "Alice's photos" }],
    });
  }, 180_000);
});

describe("npm start", () => {
  it("migrates a new database and never seeds it", async () => {
    // Without a Next build the server stops at once; with one it serves. Either way the seed would have run by then.
    const run = npmRun("start", 3337, /Ready (in|on)|started server|Could not find a production build/i);
    const { output } = await run.done;
    expect(output).not.toMatch(/Demo data created/);
    expect(existsSync(run.file), output).toBe(true);
    const counts = readDatabase(run.file, (db) => ({
      migrations: (db.prepare(`SELECT count(*) AS n FROM "_app_migrations"`).get() as { n: number }).n,
      users: (db.prepare(`SELECT count(*) AS n FROM "User"`).get() as { n: number }).n,
      clients: (db.prepare(`SELECT count(*) AS n FROM "Client"`).get() as { n: number }).n,
    }));
    expect(counts.migrations).toBeGreaterThan(0);
    expect({ users: counts.users, clients: counts.clients }).toEqual({ users: 0, clients: 0 });
  }, 180_000);
});
