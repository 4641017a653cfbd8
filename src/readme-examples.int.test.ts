// Every `sh` example of README.md runs as printed, in order, against a freshly seeded development database,
// and answers what its `# →` line shows. The examples are read from the README itself, so that the two cannot
// drift apart. Blocks preceded by `<!-- not run: why -->` are skipped (they need a browser).
//
// The server is the production dispatcher on a real socket (src/testing/app.ts) over a database of this file's
// own (a fresh SQLite file, seeded by the dev seed as `npm run dev` seeds it, whatever TEST_DATABASE_URL says:
// the README describes the default development setup), and the examples run in one bash process with the
// README's `http://localhost:3000` pointed at it and `.data/demo.env` at the seed's file. `npm run -s cli`
// (mail:list, keys:rotate) runs for real, on the same database.
//
// README_EXAMPLES_URL=http://localhost:3000 runs them against a server you started yourself instead, e.g. a
// fresh `npm run dev` (delete .data/dev.db first; the examples expect the ids of a freshly seeded database),
// with .data/demo.env and the CLI on its database, exactly as a reader would.
//
// Expected answers: `# → <JSON>` (continued on `#    ` lines). Objects match by the fields shown, arrays
// element by element, and the string "…" matches any value.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "readme-examples-"));
const databaseUrl = `file:${join(dir, "dev.db")}`;
const demoFile = join(dir, "demo.env");
// Before anything reads the environment (every app module is imported below, after this line runs).
process.env.DATABASE_URL = databaseUrl;

export type Example = { line: number; command: string; expected: string | null };

/** The README's runnable examples, in order: each command (continuation lines and heredocs joined) and its `# →`. */
export function readmeExamples(markdown: string): Example[] {
  const lines = markdown.split("\n");
  const examples: Example[] = [];
  let skip = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^<!-- not run: .+ -->$/.test(line)) {
      skip = true;
      continue;
    }
    if (line !== "```sh") {
      if (line.trim() !== "") skip = false;
      continue;
    }
    const start = i + 1;
    let end = start;
    while (lines[end] !== "```") end++;
    if (!skip) examples.push(...blockExamples(lines.slice(start, end), start + 1));
    skip = false;
    i = end;
  }
  return examples;
}

function blockExamples(lines: string[], firstLine: number): Example[] {
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("# → ")) {
      let expected = line.slice(4);
      while (lines[i + 1]?.startsWith("#    ")) expected += " " + lines[++i]!.slice(5);
      const last = examples.at(-1);
      if (!last || last.expected !== null) throw new Error(`README line ${firstLine + i}: "# →" without a command before it`);
      last.expected = expected;
      continue;
    }
    if (line.trim() === "" || line.startsWith("#")) continue;
    const start = i;
    let command = line;
    const heredoc = /<<-?'?([A-Z]+)'?/.exec(line)?.[1];
    while (command.endsWith("\\")) command += "\n" + lines[++i]!;
    if (heredoc) while (lines[i] !== heredoc) command += "\n" + lines[++i]!;
    examples.push({ line: firstLine + start, command, expected: null });
  }
  return examples;
}

/** Does `actual` show what `expected` shows? Objects by the fields given, "…" for any value. */
function shows(actual: unknown, expected: unknown): boolean {
  if (expected === "…") return actual !== undefined;
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length >= expected.length && expected.every((item, i) => shows(actual[i], item));
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([key, value]) => shows((actual as Record<string, unknown>)[key], value));
  }
  return Object.is(actual, expected);
}

function run(script: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((done) => {
    const child = execFile("bash", ["-c", script], { env, cwd: resolve("."), maxBuffer: 16 * 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) =>
      done({ stdout, stderr, code: error ? Number((error as { code?: unknown }).code ?? 1) : 0 }),
    );
    child.stdin?.end();
  });
}

const README = readFileSync(resolve("README.md"), "utf8");
const EXTERNAL = process.env.README_EXAMPLES_URL?.replace(/\/$/, "");
const MARK = "@@readme-example@@";

describe.skipIf(process.env.TEST_DATABASE_URL?.startsWith("postgres") && !EXTERNAL)("README.md's examples, run as printed", () => {
  let server: { url: string; close: () => Promise<void> };

  beforeAll(async () => {
    if (EXTERNAL) {
      server = { url: EXTERNAL, close: async () => {} };
      return;
    }
    const { env } = await import("@/env");
    const { migrate } = await import("@/db/migrate");
    await migrate(env());
    const { seedIfEmpty } = await import("@/cli/seed");
    expect(await seedIfEmpty(demoFile)).toMatch(/^Demo data created/);
    const { startServer } = await import("@/testing/app");
    server = await startServer();
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    const { disconnectDb } = await import("@/db/client");
    await disconnectDb();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(EXTERNAL)("the demo credentials are printed again on a later start, from the seed's file, for this database only", async () => {
    const { demoCredentials } = await import("@/cli/seed");
    const saved = readFileSync(demoFile, "utf8");
    const password = /^ALICE_PASSWORD='([^']+)'$/m.exec(saved)?.[1];
    expect(password).toMatch(/^[\w-]{12}$/);
    const again = demoCredentials(demoFile);
    expect(again).toContain(`alice@example.com  password ${password}`);
    expect(again).toContain("carol@example.com");
    expect(demoCredentials(join(dir, "missing.env"))).toBeNull();
    const { writeFileSync } = await import("node:fs");
    const other = join(dir, "other.env");
    writeFileSync(other, saved.replace(/^DEMO_DATABASE='[^']*'$/m, "DEMO_DATABASE='file:./.data/other.db'"));
    expect(demoCredentials(other)).toBeNull();
  });

  it("finds the examples: the token endpoint, the resources, the permission-request round trip", () => {
    const examples = readmeExamples(README);
    expect(examples.length).toBeGreaterThan(40);
    expect(examples.filter((example) => example.expected !== null).length).toBeGreaterThan(30);
    const all = examples.map((example) => example.command).join("\n");
    for (const path of ["/api/connect/oauth2/token/", "/api/bundle/", "/api/bundle_permission/", "/api/bundle_permission_request/", "mail:list"]) {
      expect(all).toContain(path);
    }
    // Nothing left to fill in by hand.
    expect(all).not.toMatch(/<(id|secret|password|access_token|refresh_token|code)>/);
  });

  it("every example answers what the README shows", async () => {
    const examples = readmeExamples(README);
    const script = [
      "set -o pipefail",
      ...examples.map((example, i) => `printf '\\n${MARK}${i}\\n'\n${example.command}`),
      `printf '\\n${MARK}end\\n'`,
    ]
      .join("\n")
      .replaceAll("http://localhost:3000/", `${server.url}/`)
      .replaceAll("source .data/demo.env", EXTERNAL ? "source .data/demo.env" : `source ${demoFile}`);
    const shell = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, NODE_ENV: "development", LOG_LEVEL: "silent" } as NodeJS.ProcessEnv;
    // Against your own server the CLI uses your environment (.env files, .data/dev.db), as it would for you.
    const own = { DATABASE_URL: databaseUrl, AUTH_SECRET: process.env.AUTH_SECRET ?? "", APP_URL: process.env.APP_URL ?? "" };
    const result = await run(script, EXTERNAL ? shell : { ...shell, ...own });
    const outputs = new Map<string, string>();
    for (const part of result.stdout.split(`\n${MARK}`).slice(1)) {
      const newline = part.indexOf("\n");
      outputs.set(part.slice(0, newline), part.slice(newline + 1).trim());
    }
    expect(outputs.has("end"), `the examples stopped early:\n${result.stderr}`).toBe(true);

    const failures: string[] = [];
    examples.forEach((example, i) => {
      if (example.expected === null) return;
      const output = outputs.get(String(i)) ?? "";
      let actual: unknown;
      try {
        actual = JSON.parse(output);
      } catch {
        actual = output;
      }
      if (!shows(actual, JSON.parse(example.expected))) {
        failures.push(`README line ${example.line}: ${example.command.split("\n")[0]}\n  shows: ${example.expected}\n  got:   ${output}`);
      }
    });
    expect(failures, result.stderr).toEqual([]);
  }, 180_000);
});
