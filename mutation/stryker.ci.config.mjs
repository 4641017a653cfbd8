// CI's incremental mutation run (docs/testing.md#mutation-testing; scripts/mutation-ci.sh sets the two
// variables): mutates only the files that differ from the committed baseline (MUTATION_FILES) and runs only
// the tests that covered them when the baseline was measured, plus changed test files (MUTATION_TESTS),
// reusing every result the baseline still vouches for. It works on a copy of the baseline, so CI never
// rewrites the committed file.
import base from "./stryker.config.mjs";

const list = (name) => (process.env[name] ?? "").split(",").filter(Boolean);
// "ci", or "ci-pg" for the second run of a file with a branch for each database (on PostgreSQL).
const run = process.env.MUTATION_RUN || "ci";

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
const config = {
  ...base,
  mutate: list("MUTATION_FILES"),
  testFiles: list("MUTATION_TESTS"),
  incremental: true,
  incrementalFile: `reports/mutation/${run}-incremental.json`,
  jsonReporter: { fileName: `reports/mutation/${run}.json` },
  htmlReporter: { fileName: `reports/mutation/${run}.html` },
  reporters: ["json", "html", "clear-text"],
};

export default config;
