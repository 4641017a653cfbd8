// One folder (or some of its files) at a time, with that folder's own tests
// (docs/testing.md#mutation-testing): a quick, conservative measure while writing tests, and how the committed
// baseline is built on 2 cores, chunk by chunk (a run writes its results only when it ends).
// `MUTATE_FOLDER=oauth npx stryker run mutation/stryker.folder.config.mjs` mutates src/oauth/ and runs
// src/oauth/**/*.test.ts; fewer tests can only kill fewer mutants, so its score is a lower bound of what the
// whole suite scores (`npm run test:mutation`).
//   MUTATE_TESTS  more test files (comma-separated globs), e.g. the integration tests elsewhere that reach
//                 the folder through the routes, for a closer (still lower) bound;
//   MUTATE_FILES  only these files of the folder (comma-separated globs), and MUTATE_NAME names the run;
//   MUTATE_SKIP   the folder's own test files to leave out (comma-separated paths), e.g. one whose tests start
//                 a server process each time they run: a mutant is active only in the runner's process, so
//                 such a test cannot kill it, and it would run again for every mutant it covers.
// Results: reports/mutation/<name>.html and .json, and reports/incremental-<name>.json (not committed; it makes
// the next run of the same name re-test only what changed). `tsx scripts/mutation.ts merge` joins runs.
import { readdirSync } from "node:fs";
import base from "./stryker.config.mjs";

const folder = process.env.MUTATE_FOLDER;
if (!folder) throw new Error("set MUTATE_FOLDER to a folder under src/ (oauth, audit, dpop, …)");
const list = (name) => (process.env[name] ?? "").split(",").filter(Boolean);
const files = list("MUTATE_FILES");
const name = process.env.MUTATE_NAME || folder;
const skip = new Set(list("MUTATE_SKIP"));
const ownTests = readdirSync(`src/${folder}`, { recursive: true, encoding: "utf8" })
  .map((path) => `src/${folder}/${path}`)
  .filter((path) => path.endsWith(".test.ts") && !skip.has(path));

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
const config = {
  ...base,
  mutate: files.length ? files : [`src/${folder}/**/*.ts`, "!src/**/*.test.ts"],
  testFiles: [...ownTests, ...list("MUTATE_TESTS")],
  incremental: true,
  incrementalFile: `reports/incremental-${name}.json`,
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  reporters: ["json", "html", "clear-text", "progress"],
};

export default config;
