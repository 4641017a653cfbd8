// The mutation baseline (docs/testing.md#mutation-testing): mutation/baseline.json, committed like a lock
// file, holds the result of every mutant of the folders in FOLDERS below, with the source of each mutated
// file and test file it was measured on. This script reads and writes it:
//
//   tsx scripts/mutation.ts score [report.json]       the score per folder and in all (default: the baseline)
//   tsx scripts/mutation.ts changed                    the mutated files and test files that differ from the
//                                                      baseline, and the tests that covered those files then
//                                                      (and which of them to measure on both databases)
//   tsx scripts/mutation.ts merge <out> <in.json...>   one report from several runs (later ones win per file;
//                                                      `in.json#src/users/` takes only the files under that
//                                                      path: a run carries over its incremental file's others;
//                                                      `in.json#src/db/fast-sql.ts+best` combines that file with
//                                                      what the earlier inputs hold for it, mutant by mutant,
//                                                      the better result winning: a file with branches for
//                                                      each database, measured once on each);
//                                                      with --mark-unmeasured, every file of the folders
//                                                      that no run measured is recorded as such (no mutants, its
//                                                      source kept: CI measures it once it changes)
//
// Score = (killed + timed out) / (killed + timed out + survived + not covered), Stryker's own definition;
// static and ignored mutants are outside it (mutation/stryker.config.mjs says why). `score` also counts, per
// folder, the mutants excluded as equivalent: the ones a `// Stryker disable` comment in the code names, with
// its reason (docs/testing.md#mutation-testing), which Stryker reports "Ignored" like the static ones.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";

type Mutant = { id: string; status: string; coveredBy?: string[]; killedBy?: string[]; [key: string]: unknown };
/** `bestOf`: the file's mutants are the best of several runs of the same source (`+best`, one per database). */
type SourceFile = { source: string; mutants: Mutant[]; unmeasured?: true; bestOf?: true; [key: string]: unknown };
type TestFile = { source?: string; tests: { id: string; name: string; [key: string]: unknown }[] };
type Report = { files: Record<string, SourceFile>; testFiles?: Record<string, TestFile>; [key: string]: unknown };

export const BASELINE = "mutation/baseline.json";
export const FOLDERS = [
  "src/oauth",
  "src/token-endpoint",
  "src/consent",
  "src/resource",
  "src/permission-requests",
  "src/http",
  "src/users",
  "src/email",
  "src/audit",
  "src/maintenance",
  "src/dpop",
  "src/device",
  "src/registration",
  "src/accounts",
  "src/par",
  "src/oidc",
  "src/db",
];
const DETECTED = new Set(["Killed", "Timeout"]);
const COUNTED = new Set(["Killed", "Timeout", "Survived", "NoCoverage"]);

const read = (path: string): Report => JSON.parse(readFileSync(path, "utf8")) as Report;

export type Tally = { detected: number; survived: number; noCoverage: number; counted: number; equivalent: number };

/** Ignored by a disable comment, not for being static (Stryker gives the static ones this reason). */
const excludedAsEquivalent = (m: Mutant) => m.status === "Ignored" && m.static !== true && !String(m.statusReason ?? "").startsWith("Static mutant");

export function tally(report: Report, keep: (file: string) => boolean = () => true): Tally {
  const t: Tally = { detected: 0, survived: 0, noCoverage: 0, counted: 0, equivalent: 0 };
  for (const [file, { mutants }] of Object.entries(report.files)) {
    if (!keep(file)) continue;
    for (const m of mutants) {
      if (excludedAsEquivalent(m)) t.equivalent++;
      if (!COUNTED.has(m.status)) continue;
      t.counted++;
      if (DETECTED.has(m.status)) t.detected++;
      else if (m.status === "Survived") t.survived++;
      else t.noCoverage++;
    }
  }
  return t;
}

export const percent = (t: Tally) => (t.counted ? (100 * t.detected) / t.counted : 100);

function score(path: string): number {
  const report = read(path);
  const rows = FOLDERS.map((folder) => [folder, tally(report, (f) => f.startsWith(`${folder}/`))] as const);
  const all = tally(report, (f) => FOLDERS.some((folder) => f.startsWith(`${folder}/`)));
  // The score stays the seventh field of a row (scripts/mutation-ci.sh reads it there).
  console.log("| Folder | Mutants | Killed or timed out | Survived | Not covered | Score | Excluded as equivalent |\n|---|---|---|---|---|---|---|");
  for (const [name, t] of [...rows, ["all folders", all] as const])
    console.log(`| \`${name}\` | ${t.counted} | ${t.detected} | ${t.survived} | ${t.noCoverage} | ${t.counted ? `${percent(t).toFixed(1)}%` : "—"} | ${t.equivalent} |`);
  const unmeasured = Object.entries(report.files).filter(([, f]) => f.unmeasured).map(([path]) => path);
  if (unmeasured.length) console.log(`\nNot measured yet (outside the scores): ${unmeasured.join(", ")}`);
  return percent(all);
}

/**
 * Files whose source on disk differs from the baseline's (or that are new), and the tests to run for them.
 * `listTests`: the test files on disk; the ones the baseline has never seen run with any re-measurement.
 */
export function changed(baseline: Report, listSources: () => string[], listTests: () => string[] = () => []) {
  const differs = (path: string, stored: string | undefined) => !existsSync(path) || stored === undefined || readFileSync(path, "utf8") !== stored;
  const sources = listSources().filter((path) => differs(path, baseline.files[path]?.source));
  const testFiles = Object.entries(baseline.testFiles ?? {});
  const changedTests = testFiles.filter(([path, t]) => existsSync(path) && differs(path, t.source)).map(([path]) => path);
  // The tests that covered a changed file's mutants last time: enough to re-measure it (a lower bound if new
  // tests elsewhere now reach it), much less than the whole suite.
  const fileOfTest = new Map<string, string>();
  for (const [path, t] of testFiles) for (const test of t.tests) fileOfTest.set(test.id, path);
  // A changed test file may change the result of any mutant it covers: re-measure those files too.
  const testIdsChanged = new Set(changedTests.flatMap((path) => baseline.testFiles![path]!.tests.map((t) => t.id)));
  const reached = Object.entries(baseline.files)
    .filter(([, f]) => f.mutants.some((m) => (m.coveredBy ?? []).some((id) => testIdsChanged.has(id))))
    .map(([path]) => path);
  // A file the baseline measured that is gone (moved or deleted) has nothing left to mutate.
  const remeasured = [...new Set([...sources, ...reached])].filter((path) => existsSync(path)).sort();
  // Every file re-measured gets all the tests that covered it, not only the changed test file that brought it
  // in: Stryker keeps a mutant's result only from the tests it runs, so a file measured with fewer tests than
  // last time loses the kills of the ones left out.
  const covering = new Set<string>(changedTests);
  // A test file written since the baseline was measured may reach any of them, and nothing says which: it runs
  // whenever something is re-measured (otherwise the mutants it kills would count as survivors).
  const newTests = listTests().filter((path) => !(path in (baseline.testFiles ?? {})));
  if (remeasured.length > 0) for (const path of newTests) covering.add(path);
  for (const path of remeasured)
    for (const m of baseline.files[path]?.mutants ?? [])
      for (const id of [...(m.coveredBy ?? []), ...(m.killedBy ?? [])]) {
        const file = fileOfTest.get(id);
        if (file && existsSync(file)) covering.add(file);
      }
  // What the run will cost: the mutants these files had last time (a new file's count is not known: it counts
  // as UNKNOWN_FILE_MUTANTS), which scripts/mutation-ci.sh weighs against its budget before starting.
  const mutants = remeasured.reduce((sum, path) => sum + (baseline.files[path] && !baseline.files[path]!.unmeasured ? baseline.files[path]!.mutants.length : UNKNOWN_FILE_MUTANTS), 0);
  // Files the baseline holds as the best of a SQLite and a PostgreSQL run (bestOf): scripts/mutation-ci.sh
  // measures them on PostgreSQL too when it has a database for it, and combines the two the same way.
  const bothDatabases = remeasured.filter((path) => baseline.files[path]?.bestOf === true);
  const postgresMutants = bothDatabases.reduce((sum, path) => sum + baseline.files[path]!.mutants.length, 0);
  return { sources: remeasured, tests: [...covering].sort(), changedTests, newTests, mutants, bothDatabases, postgresMutants };
}

/** The mutants a file the baseline never measured is counted as having, for the CI step's estimate. */
export const UNKNOWN_FILE_MUTANTS = 60;

/** A mutant's identity within its file: what it changes, where, and into what. */
const mutantKey = (m: Mutant) => JSON.stringify([m.mutatorName, m.replacement, m.location]);

/** How good a result is: killed or timed out, then survived, then not covered, then anything else. */
const RANK: Record<string, number> = { Killed: 3, Timeout: 3, Survived: 2, NoCoverage: 1 };
const rank = (m: Mutant) => RANK[m.status] ?? 0;

/**
 * A file's mutants from two runs of the same source (e.g. one on SQLite and one on PostgreSQL, each reaching
 * the branches of its own database), the better result of each mutant winning; on a tie, the later run's.
 * A mutant's covering tests are those of both runs: CI re-runs them all when the file changes.
 */
export function bestOf(earlier: Mutant[], later: Mutant[]): Mutant[] {
  const before = new Map(earlier.map((m) => [mutantKey(m), m]));
  return later.map((m) => {
    const other = before.get(mutantKey(m));
    if (!other) return m;
    const winner = rank(other) > rank(m) ? other : m;
    const coveredBy = [...new Set([...(m.coveredBy ?? []), ...(other.coveredBy ?? [])])];
    return { ...winner, coveredBy };
  });
}

/**
 * Several runs' reports as one: test ids renumbered by (file, name), so that mutants keep pointing at theirs.
 * A later report's file replaces the earlier one, unless that report is marked in `best` (its index) and the
 * file's source is the same: then the two are combined mutant by mutant (bestOf).
 */
export function merge(reports: Report[], best: ReadonlySet<number> = new Set()): Report {
  const out: Report = { ...reports[0]!, files: {}, testFiles: {} };
  const ids = new Map<string, string>();
  const idOf = (file: string, name: string) => {
    const key = `${file}\0${name}`;
    if (!ids.has(key)) ids.set(key, String(ids.size));
    return ids.get(key)!;
  };
  for (const [index, report] of reports.entries()) {
    const local = new Map<string, string>();
    for (const [path, t] of Object.entries(report.testFiles ?? {})) {
      const known = out.testFiles![path] ?? { ...t, tests: [] };
      for (const test of t.tests) {
        const id = idOf(path, test.name);
        local.set(test.id, id);
        if (!known.tests.some((k) => k.id === id)) known.tests.push({ ...test, id });
      }
      known.source = t.source;
      out.testFiles![path] = known;
    }
    const remap = (list?: string[]) => list?.map((id) => local.get(id)).filter((id): id is string => id !== undefined);
    for (const [path, file] of Object.entries(report.files)) {
      // Stryker's incremental runs (CI's) report every mutant as not static, the ones whose results they
      // reused included; a file whose source is as an earlier report measured it keeps that report's flags.
      const before = out.files[path];
      const wasStatic = new Set(before?.source === file.source ? before.mutants.filter((m) => m.static === true).map(mutantKey) : []);
      const mutants = file.mutants.map((m) => ({ ...m, static: m.static === true || wasStatic.has(mutantKey(m)), coveredBy: remap(m.coveredBy), killedBy: remap(m.killedBy) }));
      const combine = best.has(index) && before !== undefined && before.source === file.source;
      out.files[path] = combine ? { ...file, mutants: bestOf(before.mutants, mutants), bestOf: true } : { ...file, mutants };
    }
  }
  return out;
}

/** The files mutation/stryker.config.mjs mutates. */
const mutatedFiles = () =>
  FOLDERS.flatMap((folder) => readdirSync(folder, { recursive: true, encoding: "utf8" }).map((p) => `${folder}/${p}`))
    .filter((p) => p.endsWith(".ts") && !p.endsWith(".test.ts"))
    .sort();

/** The test files under src/ and app/, where the tests that reach the mutated folders live. */
const testFilesOnDisk = () =>
  ["src", "app"].flatMap((folder) => readdirSync(folder, { recursive: true, encoding: "utf8" }).map((p) => `${folder}/${p}`))
    .filter((p) => p.endsWith(".test.ts"))
    .sort();

function main(argv: string[]) {
  const [command, ...args] = argv;
  if (command === "score") {
    score(args[0] ?? BASELINE);
  } else if (command === "changed") {
    console.log(JSON.stringify(changed(read(BASELINE), mutatedFiles, testFilesOnDisk)));
  } else if (command === "merge" && args.length >= 2) {
    const markUnmeasured = args.includes("--mark-unmeasured");
    const [outPath, ...inputs] = args.filter((a) => a !== "--mark-unmeasured");
    const best = new Set<number>();
    const merged = merge(
      inputs.map((input, index) => {
        const [path, spec = ""] = input.split("#");
        if (spec.endsWith("+best")) best.add(index);
        const prefix = spec.replace(/\+best$/, "");
        const report = read(path!);
        if (prefix) report.files = Object.fromEntries(Object.entries(report.files).filter(([file]) => file.startsWith(prefix)));
        return report;
      }),
      best,
    );
    if (markUnmeasured)
      for (const path of mutatedFiles())
        merged.files[path] ??= { language: "typescript", source: readFileSync(path, "utf8"), mutants: [], unmeasured: true };
    writeFileSync(outPath!, JSON.stringify(merged));
    score(outPath!);
  } else {
    console.error("usage: tsx scripts/mutation.ts score [report.json] | changed | merge <out.json> <in.json...>");
    process.exit(2);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
