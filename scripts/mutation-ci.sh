#!/usr/bin/env bash
# CI's mutation-testing step (docs/testing.md#mutation-testing): `bash scripts/mutation-ci.sh`, the last step
# of .ci/run.
#
# mutation/baseline.json is committed: the result of every mutant of the mutated folders, with the source of
# each file and test file it was measured on (refresh it with `npm run test:mutation -- --incremental`, or
# one folder at a time, see docs/testing.md#mutation-testing, and commit it with the change, like a lock file).
# This step:
#   1. compares the mutated files and the test files on disk with the baseline (scripts/mutation.ts changed);
#   2. if nothing differs, prints the baseline's scores: the code is what was measured;
#   3. otherwise runs Stryker incrementally on the changed files only, with the tests that covered them
#      (mutation/stryker.ci.config.mjs), and prints the scores with those files' new results.
# A file with a branch for each database (src/db/fast-sql.ts: its baseline is the best of a run on SQLite and one
# on PostgreSQL, `bestOf` in mutation/baseline.json) is measured on SQLite, then, when MUTATION_TEST_DATABASE_URL
# names a PostgreSQL database (.ci/run sets it), on PostgreSQL as well (one runner), and the two are combined
# mutant by mutant as the baseline was (scripts/mutation.ts merge `+best`). Without that database its
# PostgreSQL-only mutants count as the SQLite run finds them (not covered): the step says so.
# MUTATION_MIN_SCORE (default 85) fails the step when any of the mutated folders scores below it.
# MUTATION_BUDGET_SECONDS (default 720) stops a run that would take longer; a stopped run is reported, not
# failed (the change's author refreshes the baseline instead). A run that cannot fit is not started at all:
# Stryker's first run of the covering tests takes a few minutes and each mutant about MUTANT_SECONDS of the
# runners (3-7 s of one runner, two at once), so with fewer seconds left than STARTUP_SECONDS plus the
# mutants the changed files had last time times MUTANT_SECONDS, the stale files are named instead.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
budget="${MUTATION_BUDGET_SECONDS:-720}"
min_score="${MUTATION_MIN_SCORE:-85}"
started=$(date +%s)
mkdir -p reports/mutation
# mutation/stryker.config.mjs runs everything on PostgreSQL when this is set: only the second run gets it.
pg_url="${MUTATION_TEST_DATABASE_URL:-}"
unset MUTATION_TEST_DATABASE_URL

plan=$(npx tsx scripts/mutation.ts changed)
files=$(node -e 'console.log(JSON.parse(process.argv[1]).sources.join(","))' "$plan")
mutants=$(node -e 'console.log(JSON.parse(process.argv[1]).mutants)' "$plan")
both=$(node -e 'console.log(JSON.parse(process.argv[1]).bothDatabases.join(","))' "$plan")
[ -n "$pg_url" ] || both=""
estimate=$(( ${STARTUP_SECONDS:-240} + mutants * ${MUTANT_SECONDS:-3} ))
# The PostgreSQL run: a start-up of its own, and one runner, so about twice as long a mutant.
[ -z "$both" ] || estimate=$(( estimate + ${STARTUP_SECONDS:-240} + 2 * ${MUTANT_SECONDS:-3} * $(node -e 'console.log(JSON.parse(process.argv[1]).postgresMutants)' "$plan") ))
tests=$(node -e 'console.log(JSON.parse(process.argv[1]).tests.join(","))' "$plan")
report=mutation/baseline.json

if [ -z "$files" ]; then
  echo "mutation testing: every mutated file and test file is as measured in mutation/baseline.json"
elif [ "$budget" -lt "$estimate" ]; then
  echo "mutation testing: NOT re-measured (about ${estimate}s for ${mutants} mutants, ${budget}s of CI time left): ${files//,/ }"
  echo "  differ from mutation/baseline.json; the scores below are the baseline's. Refresh the baseline."
else
  echo "mutation testing: re-measuring ${files//,/ }"
  echo "  with ${tests//,/ }"
  cp mutation/baseline.json reports/mutation/ci-incremental.json
  status=0
  MUTATION_FILES="$files" MUTATION_TESTS="$tests" timeout --signal=INT --kill-after=60 "$budget" \
    node_modules/.bin/stryker run mutation/stryker.ci.config.mjs --concurrency "${MUTATION_CONCURRENCY:-2}" || status=$?
  if [ "$status" = 124 ] || [ "$status" = 130 ]; then
    echo "mutation testing: stopped at the budget of ${budget}s; refresh mutation/baseline.json with the change"
    rm -rf .stryker-tmp
    exit 0
  fi
  [ "$status" = 0 ] || { echo "mutation testing failed (exit $status)"; exit "$status"; }
  combined=()
  if [ -n "$both" ]; then
    echo "mutation testing: re-measuring ${both//,/ } on PostgreSQL too"
    cp mutation/baseline.json reports/mutation/ci-pg-incremental.json
    left=$(( budget - ($(date +%s) - started) ))
    [ "$left" -gt 0 ] || left=1
    MUTATION_RUN=ci-pg MUTATION_TEST_DATABASE_URL="$pg_url" MUTATION_FILES="$both" MUTATION_TESTS="$tests" \
      timeout --signal=INT --kill-after=60 "$left" node_modules/.bin/stryker run mutation/stryker.ci.config.mjs || status=$?
    if [ "$status" = 124 ] || [ "$status" = 130 ]; then
      echo "mutation testing: stopped at the budget of ${budget}s; refresh mutation/baseline.json with the change"
      rm -rf .stryker-tmp
      exit 0
    fi
    [ "$status" = 0 ] || { echo "mutation testing failed on PostgreSQL (exit $status)"; exit "$status"; }
    for file in ${both//,/ }; do combined+=("reports/mutation/ci-pg.json#${file}+best"); done
  else
    pg_only=$(node -e 'console.log(JSON.parse(process.argv[1]).bothDatabases.join(" "))' "$plan")
    [ -z "$pg_only" ] || echo "mutation testing: ${pg_only} measured on SQLite only (no MUTATION_TEST_DATABASE_URL): its PostgreSQL branches count as not covered"
  fi
  npx tsx scripts/mutation.ts merge reports/mutation/scored.json mutation/baseline.json reports/mutation/ci.json "${combined[@]}" >/dev/null
  report=reports/mutation/scored.json
fi

npx tsx scripts/mutation.ts score "$report" | tee reports/mutation/score.md
score=$(grep 'all folders' reports/mutation/score.md | awk -F'|' '{ gsub(/[ %]/, "", $7); print $7 }')
echo "mutation testing: ${score}% over the mutated folders in $(( $(date +%s) - started ))s (minimum ${min_score}% in each folder)"
# Each folder on its own (at least the minimum score in every folder); a folder with no measured mutant fails
# too.
below=$(grep -E '^\| `src/' reports/mutation/score.md | awk -F'|' -v min="$min_score" \
  '{ gsub(/[ `%]/, "", $2); gsub(/[ %]/, "", $7); if ($7 == "—" || $7 + 0 < min + 0) printf "%s (%s) ", $2, $7 }')
[ -z "$below" ] || { echo "mutation score below ${min_score}% in: ${below}"; exit 1; }
