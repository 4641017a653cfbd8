import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

// Everything the tests write goes under .test-scratch/ (TEST_SCRATCH_DIR), never under .data/, where a
// developer's `npm run dev` keeps its database, AUTH_SECRET and demo credentials
// (docs/testing.md#what-npm-test-leaves-alone).
const scratchDir = resolve(process.env.TEST_SCRATCH_DIR || ".test-scratch");
mkdirSync(scratchDir, { recursive: true });
process.env.TEST_SCRATCH_DIR = scratchDir;
// The tests' database: TEST_DATABASE_URL (PostgreSQL in CI), else a fresh SQLite file for this run.
// DATABASE_URL is never used, so that `npm test` cannot touch a developer's own database.
const databaseUrl = process.env.TEST_DATABASE_URL || `file:${join(scratchDir, `run-${process.pid}.db`)}`;
process.env.DATABASE_URL = databaseUrl;

// Under Stryker (it sets STRYKER_MUTATOR_WORKER in its test runners), the test files whose every assertion is
// about a child process (the CLI, `npm run dev`/`npm start`, server instances) are left out: a mutant is
// active only inside the test runner's own process, so these can never kill one, and they are the slowest
// files of the suite. `npm test` runs them as always.
const CHILD_PROCESS_TESTS = [
  "scripts/serve.int.test.ts",
  "src/cli/cli.int.test.ts",
  "src/email/delivery-instances.int.test.ts",
  "src/examples-run-as-printed.int.test.ts",
  "src/http/log-lines.int.test.ts",
  "src/limits/bursts-instances.int.test.ts",
  "src/maintenance/prune-then-404.int.test.ts",
  "src/oauth/rate-limit-instances.int.test.ts",
];
// Also left out under Stryker: a file that replaces a module (vi.mock) that src/testing/stryker-preload.ts has
// already loaded for the modules under test, so its steering cannot reach them there and its tests fail.
const MOCKING_TESTS = ["src/device/user-code-taken.int.test.ts"];
const underStryker = process.env.STRYKER_MUTATOR_WORKER !== undefined;

export default defineConfig({
  resolve: {
    alias: {
      "@/": fileURLToPath(new URL("./src/", import.meta.url)),
      "@emails/": fileURLToPath(new URL("./emails/", import.meta.url)),
    },
  },
  test: {
    include: ["src/**/*.test.ts", "app/**/*.test.ts", "scripts/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...(underStryker ? [...CHILD_PROCESS_TESTS, ...MOCKING_TESTS] : [])],
    globalSetup: ["src/testing/global-setup.ts"],
    // Does nothing except under Stryker (see the file).
    setupFiles: ["src/testing/stryker-preload.ts"],
    env: {
      NODE_ENV: "test",
      DATABASE_URL: databaseUrl,
      TEST_SCRATCH_DIR: scratchDir,
      AUTH_SECRET: "test-secret-test-secret-test-secret-0123",
      APP_URL: "http://localhost:3000",
      LOG_LEVEL: "silent",
      RESEND_API_KEY: "",
    },
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
