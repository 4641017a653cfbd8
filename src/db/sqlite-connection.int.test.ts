// The SQLite write connection's settings (src/db/client.ts, docs/design.md#the-data-layer):
// its savepoints keep their journal in memory. Every grouped write of src/db/fast-sql.ts runs in a savepoint,
// and SQLite writes a savepoint's journal to a new temporary file (open, unlink, a write per page) once it
// passes 64 KiB, unless temp_store is MEMORY. Runs when the suite runs on SQLite.
import { readdirSync, readlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { driver } from "@/db/client";

const onPostgres = process.env.TEST_DATABASE_URL?.startsWith("postgres") ?? false;

/** The files this process holds open that SQLite made for temporary data (named etilqs_*). */
function temporaryFilesOpen(): string[] {
  const links: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      links.push(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // closed between the listing and the read
    }
  }
  return links.filter((link) => link.includes("etilqs_"));
}

describe.skipIf(onPostgres)("the SQLite write connection", () => {
  it("keeps a savepoint's journal in memory: a savepoint that changes hundreds of existing pages opens no temporary file", async () => {
    const d = await driver();
    if (d.kind !== "sqlite") throw new Error("expected SQLite");
    const connection = d.connection;
    const seen: string[][] = [];
    // Under the connection's lock (src/db/client.ts), as every statement of ours on it.
    await d.exclusive(() => {
      connection.exec(`CREATE TABLE "savepoint_journal_check" ("id" INTEGER PRIMARY KEY, "text" TEXT NOT NULL)`);
      connection.exec(`CREATE INDEX "savepoint_journal_check_text" ON "savepoint_journal_check" ("text")`);
      try {
        const insert = connection.prepare(`INSERT INTO "savepoint_journal_check" ("text") VALUES (?)`);
        const rewrite = connection.prepare(`UPDATE "savepoint_journal_check" SET "text" = ? || "text"`);
        // Pages that exist before a savepoint are the ones its journal keeps: about 300 of them.
        connection.transaction(() => {
          for (let i = 0; i < 1000; i++) insert.run(`${i}:${"x".repeat(400)}`);
        }).immediate();
        const inSavepoint = connection.transaction((round: number) => {
          rewrite.run(String(round));
          seen.push(temporaryFilesOpen());
        });
        connection.transaction(() => {
          for (let round = 0; round < 5; round++) inSavepoint(round); // nested: a savepoint each, as a group commit's writes
        }).immediate();
      } finally {
        connection.exec(`DROP TABLE "savepoint_journal_check"`);
      }
    });
    expect(seen).toHaveLength(5);
    expect(seen.flat()).toEqual([]);
  });
});
