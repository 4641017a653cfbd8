// One folder at a time, with that folder's own tests only (issue 15): a quick, conservative measure while
// writing tests. `MUTATE_FOLDER=oauth npx stryker run stryker.folder.config.mjs` mutates src/oauth/ and runs
// src/oauth/**/*.test.ts; fewer tests can only kill fewer mutants, so its score is a lower bound of what the
// whole suite scores (`npm run test:mutation`). Results: reports/mutation/<folder>.html and .json; its
// incremental file (reports/incremental-<folder>.json, not committed) makes the next run of that folder
// re-test only what changed. MUTATE_TESTS adds test files from elsewhere (comma-separated globs), e.g. the
// integration tests that exercise the folder through the routes, for a closer (still lower) bound.
import base from "./stryker.config.mjs";

const folder = process.env.MUTATE_FOLDER;
if (!folder) throw new Error("set MUTATE_FOLDER to one of oauth, permission-requests, http, users, email");

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
const config = {
  ...base,
  mutate: [`src/${folder}/**/*.ts`, "!src/**/*.test.ts"],
  testFiles: [`src/${folder}/**/*.test.ts`, ...(process.env.MUTATE_TESTS ?? "").split(",").filter(Boolean)],
  incremental: true,
  incrementalFile: `reports/incremental-${folder}.json`,
  jsonReporter: { fileName: `reports/mutation/${folder}.json` },
  htmlReporter: { fileName: `reports/mutation/${folder}.html` },
  reporters: ["json", "html", "clear-text", "progress"],
};

export default config;
