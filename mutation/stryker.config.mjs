// Mutation testing (docs/testing.md#mutation-testing): StrykerJS 9 with its vitest runner (Stryker 10 needs
// Node 22). `npm run test:mutation` mutates the folders below (scripts/mutation.ts FOLDERS) and runs, for each mutant, the tests that
// cover it; the HTML report lands in reports/mutation/ (gitignored). With `-- --incremental` it reuses the
// results stored in mutation/baseline.json (committed) for every mutant whose code and covering tests did
// not change; scripts/mutation-ci.sh is that, for CI.
//
// How it runs here: Stryker copies the project into .stryker-tmp/sandbox-*/ and starts one vitest per
// sandbox in it (the vitest runner forces the threads pool with one worker). vitest.config.ts names the test
// database after the process id, relative to the working directory, so every sandbox migrates and uses its own
// SQLite file (.stryker-tmp/sandbox-*/.test-scratch/run-<pid>.db). TEST_DATABASE_URL is cleared here, before
// Stryker starts its test runners (they inherit this environment): two sandboxes must never share a database.
// MUTATION_TEST_DATABASE_URL runs the mutants on PostgreSQL instead (for the code only PostgreSQL reaches,
// e.g. the one-statement refresh rotation): one database, so one test runner.
const postgres = process.env.MUTATION_TEST_DATABASE_URL;
if (postgres) process.env.TEST_DATABASE_URL = postgres;
else delete process.env.TEST_DATABASE_URL;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
const config = {
  testRunner: "vitest",
  vitest: {
    configFile: "vitest.config.ts",
    // Integration tests reach route modules through the dispatcher's dynamic import(), which vitest's
    // static "related files" analysis cannot follow: per-test coverage decides which tests run instead.
    related: false,
  },
  coverageAnalysis: "perTest",
  mutate: [
    "src/oauth/**/*.ts",
    "src/token-endpoint/**/*.ts",
    "src/consent/**/*.ts",
    "src/resource/**/*.ts",
    "src/permission-requests/**/*.ts",
    "src/http/**/*.ts",
    "src/users/**/*.ts",
    "src/email/**/*.ts",
    "src/audit/**/*.ts",
    "src/maintenance/**/*.ts",
    "src/dpop/**/*.ts",
    "src/device/**/*.ts",
    "src/registration/**/*.ts",
    "src/accounts/**/*.ts",
    "src/par/**/*.ts",
    "src/oidc/**/*.ts",
    "src/db/**/*.ts",
    "!src/**/*.test.ts",
  ],
  // Build output, databases and reports are not needed in a sandbox (src/generated/ is: it is the Prisma client).
  ignorePatterns: [".next", ".data", ".test-scratch", "reports", "test-results", "playwright-report", "bench-results", ".stryker-tmp*", "stryker.log"],
  reporters: ["html", "json", "clear-text", "progress"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: false },
  incrementalFile: "mutation/baseline.json",
  concurrency: postgres ? 1 : 2,
  // Static mutants (module-level constants, regexes and zod schemas) are covered only while a module loads,
  // so Stryker would run the whole suite for each of them: minutes per mutant on 2 cores. They are left out
  // of the score (reported as "Ignored"); docs/testing.md#mutation-testing lists how many there are.
  ignoreStatic: true,
  // The first run of the whole suite in one thread takes a few minutes on 2 shared cores.
  dryRunTimeoutMinutes: 30,
  timeoutMS: 10_000,
  thresholds: { high: 90, low: 85, break: null },
  cleanTempDir: true,
};

export default config;
