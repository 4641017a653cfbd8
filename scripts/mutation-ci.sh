#!/usr/bin/env bash
# CI's mutation-testing step (issue 15), to be called from .ci/run after the SQLite tests:
#
#   bash scripts/mutation-ci.sh
#
# Stryker runs incrementally against stryker-incremental.json, which is committed: a mutant whose code and
# covering tests are unchanged since that file was written keeps its result, so a change costs one dry run
# of the suite (to learn which tests cover what) plus the mutants it touches. The file is brought up to date
# with `npm run test:mutation -- --incremental` and committed with the change, like a lock file.
#
# Budget: MUTATION_BUDGET_MINUTES (default 12). A run that would take longer (a large change whose results
# were not committed) is stopped and reported, not failed: the score then comes from the next full run.
# MUTATION_MIN_SCORE, when set, fails the step if the score of the five folders is below it.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
budget_minutes="${MUTATION_BUDGET_MINUTES:-12}"
started=$(date +%s)

status=0
timeout --signal=INT --kill-after=60 "$((budget_minutes * 60))" \
  node_modules/.bin/stryker run --incremental --reporters clear-text,json,html --concurrency "${MUTATION_CONCURRENCY:-2}" || status=$?
elapsed=$(( $(date +%s) - started ))

if [ "$status" = 124 ] || [ "$status" = 130 ]; then
  echo "mutation testing: stopped at the budget of ${budget_minutes} minutes (${elapsed}s)."
  echo "  Too many mutants changed since stryker-incremental.json was written: run"
  echo "  npm run test:mutation -- --incremental, and commit stryker-incremental.json."
  rm -rf .stryker-tmp
  exit 0
fi
if [ "$status" != 0 ]; then
  echo "mutation testing failed (exit $status) after ${elapsed}s"
  exit "$status"
fi

score=$(node -e '
  const report = require("./reports/mutation/mutation.json");
  let detected = 0, valid = 0;
  for (const file of Object.values(report.files))
    for (const m of file.mutants) {
      if (["Killed", "Timeout"].includes(m.status)) detected++;
      if (["Killed", "Timeout", "Survived", "NoCoverage"].includes(m.status)) valid++;
    }
  console.log(valid ? ((100 * detected) / valid).toFixed(2) : "100.00");
')
echo "mutation testing: score ${score}% in ${elapsed}s"
if [ -n "${MUTATION_MIN_SCORE:-}" ] && node -e "process.exit(Number('$score') < Number('$MUTATION_MIN_SCORE') ? 0 : 1)"; then
  echo "mutation score ${score}% is below MUTATION_MIN_SCORE=${MUTATION_MIN_SCORE}%"
  exit 1
fi
