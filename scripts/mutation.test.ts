import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { changed, merge } from "./mutation";

// Two runs of one file (docs/testing.md#mutation-testing: a file with a branch for each database), as Stryker's
// JSON reports hold them: the same mutants, each with its own result.
const at = (line: number) => ({ start: { line, column: 1 }, end: { line, column: 9 } });
const mutant = (id: string, line: number, status: string, coveredBy: string[] = [], killedBy: string[] = []) => ({
  id, mutatorName: "ConditionalExpression", replacement: "true", location: at(line), status, coveredBy, killedBy,
});
const report = (source: string, mutants: ReturnType<typeof mutant>[], tests: string[]) => ({
  files: { "src/db/x.ts": { language: "typescript", source, mutants } },
  testFiles: { "src/db/x.int.test.ts": { source: "tests", tests: tests.map((name, i) => ({ id: String(i), name })) } },
});

describe("merging two runs of one file, the better result of each mutant winning", () => {
  const sqlite = report("code", [mutant("1", 1, "Killed", ["0"], ["0"]), mutant("2", 2, "NoCoverage"), mutant("3", 3, "Survived", ["0"]), mutant("4", 4, "Timeout", ["0"])], ["on SQLite"]);
  const postgres = report("code", [mutant("1", 1, "Survived", ["0"]), mutant("2", 2, "Killed", ["0"], ["0"]), mutant("3", 3, "NoCoverage"), mutant("4", 4, "Survived", ["0"])], ["on PostgreSQL"]);

  it("keeps killed or timed out over survived over not covered, whichever run found it", () => {
    const out = merge([sqlite, postgres], new Set([1]));
    const file = out.files["src/db/x.ts"]!;
    expect(file.mutants.map((m) => m.status)).toEqual(["Killed", "Killed", "Survived", "Timeout"]);
    expect(file.bestOf).toBe(true);
    // Each mutant points at the test of the run that killed it, and is covered by the tests of both.
    const name = (id: string) => Object.values(out.testFiles!).flatMap((t) => t.tests).find((t) => t.id === id)!.name;
    expect(file.mutants[0]!.killedBy!.map(name)).toEqual(["on SQLite"]);
    expect(file.mutants[1]!.killedBy!.map(name)).toEqual(["on PostgreSQL"]);
    expect(file.mutants[0]!.coveredBy!.map(name).sort()).toEqual(["on PostgreSQL", "on SQLite"]);
  });

  it("without +best, or when the source differs, the later run replaces the file", () => {
    expect(merge([sqlite, postgres]).files["src/db/x.ts"]!.mutants.map((m) => m.status)).toEqual(["Survived", "Killed", "NoCoverage", "Survived"]);
    const edited = { ...postgres, files: { "src/db/x.ts": { ...postgres.files["src/db/x.ts"], source: "code, edited" } } };
    const out = merge([sqlite, edited], new Set([1])).files["src/db/x.ts"]!;
    expect(out.mutants.map((m) => m.status)).toEqual(["Survived", "Killed", "NoCoverage", "Survived"]);
    expect(out.bestOf).toBeUndefined();
  });

  it("names such a file for CI to measure on both databases when it changes", () => {
    const baseline = merge([sqlite, postgres], new Set([1]));
    const plan = changed(baseline, () => ["src/db/x.ts"]); // not on disk: it differs
    expect(plan.bothDatabases).toEqual([]); // gone from disk: nothing to measure
    const onDisk = changed({ ...baseline, files: { "scripts/mutation.ts": { ...baseline.files["src/db/x.ts"]!, source: "before" } } }, () => ["scripts/mutation.ts"]);
    expect(onDisk.bothDatabases).toEqual(["scripts/mutation.ts"]);
    expect(onDisk.postgresMutants).toBe(4);
  });
});

describe("test files the baseline has never seen", () => {
  const baseline = report("code", [mutant("1", 1, "Survived", ["0"])], ["an old test"]);
  const onDisk = ["src/db/x.int.test.ts", "scripts/mutation.test.ts"];

  it("run with every re-measurement, since they may kill any of its mutants", () => {
    const edited = { ...baseline, files: { "scripts/mutation.ts": { ...baseline.files["src/db/x.ts"], source: "before" } } };
    const plan = changed(edited, () => ["scripts/mutation.ts"], () => onDisk);
    expect(plan.sources).toEqual(["scripts/mutation.ts"]);
    expect(plan.newTests).toEqual(["scripts/mutation.test.ts"]);
    expect(plan.tests).toContain("scripts/mutation.test.ts");
  });

  it("run nothing when nothing is re-measured", () => {
    const same = { ...baseline, files: { "scripts/mutation.test.ts": { ...baseline.files["src/db/x.ts"], source: readFileSync("scripts/mutation.test.ts", "utf8") } }, testFiles: {} };
    const plan = changed(same, () => ["scripts/mutation.test.ts"], () => onDisk);
    expect(plan.sources).toEqual([]);
    expect(plan.tests).toEqual([]);
  });
});
