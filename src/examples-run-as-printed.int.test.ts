// The documentation's examples run as printed: every runnable `sh` example of README.md (the five-minute tour)
// and of docs/api.md, in order, answers what its `# →` line shows. The examples are read from the documents
// themselves, so that the documents and the service cannot drift apart. Blocks preceded by
// `<!-- not run: why -->` are skipped (they need a browser, or a setting `npm run dev` does not have).
//
// Each document runs as a reader would run it: against a freshly seeded development database of its own (a
// fresh SQLite file, migrated and seeded by the dev seed as `npm run dev` seeds it, whatever TEST_DATABASE_URL
// says: the documents describe the default development setup), served by a server instance of its own (the
// production dispatcher on a real socket, in a separate process: src/testing/instance.ts), in one bash process
// with the documents' `http://localhost:3000` pointed at it and `.data/demo.env` at the seed's file.
// `npm run -s cli` (mail:list, keys:rotate) runs for real, on the same database. README.md runs first, then
// docs/api.md.
//
// EXAMPLES_URL=http://localhost:3000 EXAMPLES_DOCUMENT=docs/api.md runs one document's examples against a
// server you started yourself instead, e.g. a fresh `npm run dev` (delete .data/dev.db first: the examples
// expect the ids of a freshly seeded database), with .data/demo.env and the CLI on its database.
//
// Expected answers: `# → <JSON>` (continued on `#    ` lines). Objects match by the fields shown, arrays
// element by element, and the string "…" matches any value.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startInstance, type Instance } from "@/testing/instance";

const DOCUMENTS = ["README.md", "docs/api.md"] as const;
type Document = (typeof DOCUMENTS)[number];

const dir = mkdtempSync(join(tmpdir(), "doc-examples-"));
const databaseOf = (document: Document) => `file:${join(dir, `${document.replace(/\W/g, "-")}.db`)}`;
const demoFileOf = (document: Document) => join(dir, `${document.replace(/\W/g, "-")}.env`);
// This process reads only the README's demo file (the credentials test below), as `npm run dev` would on the
// README's database: set before anything reads the environment (app modules are imported later, in the tests).
process.env.DATABASE_URL = databaseOf("README.md");

export type Example = { line: number; command: string; expected: string | null };

/** A document's runnable examples, in order: each command (continuation lines and heredocs joined) and its `# →`. */
export function documentExamples(markdown: string): Example[] {
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
      if (!last || last.expected !== null) throw new Error(`line ${firstLine + i}: "# →" without a command before it`);
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
    const child = execFile("bash", ["-c", script], { env, cwd: resolve("."), maxBuffer: 16 * 1024 * 1024, timeout: 150_000 }, (error, stdout, stderr) =>
      done({ stdout, stderr, code: error ? Number((error as { code?: unknown }).code ?? 1) : 0 }),
    );
    child.stdin?.end();
  });
}

/** Runs a document's examples in one bash process; the failures, each with what it showed and what came. */
async function runExamples(document: Document, examples: Example[], server: { url: string }, external: boolean): Promise<string[]> {
  const MARK = "@@doc-example@@";
  const databaseUrl = databaseOf(document);
  const script = [
    "set -o pipefail",
    ...examples.map((example, i) => `printf '\\n${MARK}${i}\\n'\n${example.command}`),
    `printf '\\n${MARK}end\\n'`,
  ]
    .join("\n")
    .replaceAll("http://localhost:3000/", `${server.url}/`)
    .replaceAll("source .data/demo.env", external ? "source .data/demo.env" : `source ${demoFileOf(document)}`);
  const shell = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, NODE_ENV: "development", LOG_LEVEL: "silent" } as NodeJS.ProcessEnv;
  // Against your own server the CLI uses your environment (.env files, .data/dev.db), as it would for you.
  const own = { DATABASE_URL: databaseUrl, AUTH_SECRET: process.env.AUTH_SECRET ?? "", APP_URL: process.env.APP_URL ?? "" };
  const result = await run(script, external ? shell : { ...shell, ...own });
  const outputs = new Map<string, string>();
  for (const part of result.stdout.split(`\n${MARK}`).slice(1)) {
    const newline = part.indexOf("\n");
    outputs.set(part.slice(0, newline), part.slice(newline + 1).trim());
  }
  if (!outputs.has("end")) return [`the examples of ${document} stopped early:\n${result.stderr}`];

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
      failures.push(`${document} line ${example.line}: ${example.command.split("\n")[0]}\n  shows: ${example.expected}\n  got:   ${output}\n${result.stderr}`);
    }
  });
  return failures;
}

const EXTERNAL = process.env.EXAMPLES_URL?.replace(/\/$/, "");
const ONLY = process.env.EXAMPLES_DOCUMENT;
if (EXTERNAL && !DOCUMENTS.includes(ONLY as Document)) {
  throw new Error(`EXAMPLES_URL needs EXAMPLES_DOCUMENT, one of ${DOCUMENTS.join(", ")}: each document expects a freshly seeded database`);
}

/** What each document's examples must at least reach, so that a parsing slip cannot pass by running nothing. */
const REACHES: Record<Document, { examples: number; answers: number; paths: string[] }> = {
  "README.md": { examples: 6, answers: 4, paths: ["/api/connect/oauth2/token/", "/api/user/1/", "/api/bundle_permission_request/", "mail:list"] },
  "docs/api.md": {
    examples: 40,
    answers: 30,
    paths: ["/api/connect/oauth2/token/", "/api/bundle/", "/api/bundle_permission/", "/api/bundle_permission_request/", "mail:list"],
  },
};

describe.skipIf(process.env.TEST_DATABASE_URL?.startsWith("postgres") && !EXTERNAL)(
  "the examples of README.md and docs/api.md, run as printed, each document on a freshly seeded database",
  () => {
    afterAll(() => {
      rmSync(dir, { recursive: true, force: true });
    });

    for (const document of DOCUMENTS) {
      describe.skipIf(EXTERNAL && ONLY !== document)(document, () => {
        const examples = documentExamples(readFileSync(resolve(document), "utf8"));
        let server: { url: string; stop: () => Promise<void> } | undefined;

        beforeAll(async () => {
          if (EXTERNAL) {
            server = { url: EXTERNAL, stop: async () => {} };
            return;
          }
          const instance: Instance = await startInstance({ env: { DATABASE_URL: databaseOf(document) }, seed: demoFileOf(document) });
          server = instance;
        }, 120_000);

        afterAll(async () => {
          await server?.stop();
        });

        it("finds the examples, with nothing left to fill in by hand", () => {
          const reaches = REACHES[document];
          expect(examples.length).toBeGreaterThanOrEqual(reaches.examples);
          expect(examples.filter((example) => example.expected !== null).length).toBeGreaterThanOrEqual(reaches.answers);
          const all = examples.map((example) => example.command).join("\n");
          for (const path of reaches.paths) expect(all).toContain(path);
          expect(all).not.toMatch(/<(id|secret|password|access_token|refresh_token|code)>/);
        });

        it("every example answers what the document shows", async () => {
          expect(await runExamples(document, examples, server!, Boolean(EXTERNAL))).toEqual([]);
        }, 180_000);

        // The README says so: `npm run dev` prints the demo credentials again on every start.
        if (document !== "README.md") return;
        it.skipIf(EXTERNAL)("the demo credentials are printed again on a later start, from the seed's file, for this database only", async () => {
          const { demoCredentials } = await import("@/cli/seed");
          const saved = readFileSync(demoFileOf(document), "utf8");
          const password = /^ALICE_PASSWORD='([^']+)'$/m.exec(saved)?.[1];
          expect(password).toMatch(/^[\w-]{12}$/);
          const again = demoCredentials(demoFileOf(document));
          expect(again).toContain(`alice@example.com  password ${password}`);
          expect(again).toContain("carol@example.com");
          expect(demoCredentials(join(dir, "missing.env"))).toBeNull();
          const other = join(dir, "other.env");
          writeFileSync(other, saved.replace(/^DEMO_DATABASE='[^']*'$/m, "DEMO_DATABASE='file:./.data/other.db'"));
          expect(demoCredentials(other)).toBeNull();
        });
      });
    }
  },
);
