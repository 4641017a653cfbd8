import { describe, expect, it } from "vitest";
import { MigrationError, migrationsDir, plan, readMigrations, REWORDED, statementsChecksum } from "@/db/migrate";

const file = (name: string, checksum: string) => ({ name, sql: "", checksum });

describe("migration plan", () => {
  it("applies what has not been applied, in order", () => {
    const files = [file("1_a", "x"), file("2_b", "y"), file("3_c", "z")];
    expect(plan(files, [{ name: "1_a", checksum: "x" }]).map((m) => m.name)).toEqual(["2_b", "3_c"]);
  });

  it("refuses to run when an applied file has changed", () => {
    expect(() => plan([file("1_a", "changed")], [{ name: "1_a", checksum: "x" }])).toThrow(MigrationError);
    expect(() => plan([file("1_a", "changed")], [{ name: "1_a", checksum: "x" }])).toThrow(/has changed since it was applied/);
  });

  it("refuses to run when an applied file is missing", () => {
    expect(() => plan([], [{ name: "1_a", checksum: "x" }])).toThrow(/file is missing/);
  });

  it("has the same migrations, by name, for both databases", () => {
    const names = (kind: "sqlite" | "postgresql") => readMigrations(migrationsDir(kind)).map((m) => m.name);
    expect(names("sqlite")).toEqual(names("postgresql"));
    expect(names("sqlite").length).toBeGreaterThan(0);
  });

  it("accepts a database that applied an earlier wording of a reworded migration, and only while its statements are unchanged", () => {
    const files = (["sqlite", "postgresql"] as const).flatMap((kind) => readMigrations(migrationsDir(kind)));
    for (const [name, entries] of Object.entries(REWORDED)) {
      for (const entry of entries) {
        // Every earlier wording belongs to one file of today, whose statements are the ones that were applied.
        const matches = files.filter((file) => file.name === name && statementsChecksum(file.sql) === entry.statements);
        expect(matches, `${name} ${entry.applied}`).toHaveLength(1);
        const migration = matches[0]!;
        expect(migration.checksum).not.toBe(entry.applied);
        expect(plan([migration], [{ name, checksum: entry.applied }])).toEqual([]);
        const changed = { ...migration, sql: `${migration.sql}\nSELECT 1;\n`, checksum: "changed" };
        expect(() => plan([changed], [{ name, checksum: entry.applied }])).toThrow(/has changed since it was applied/);
        const commentOnly = { ...migration, sql: `-- a note\n${migration.sql}`, checksum: "reworded again" };
        expect(plan([commentOnly], [{ name, checksum: entry.applied }])).toEqual([]);
      }
    }
  });
});
