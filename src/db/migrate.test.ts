import { describe, expect, it } from "vitest";
import { MigrationError, migrationsDir, plan, readMigrations } from "@/db/migrate";

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
});
