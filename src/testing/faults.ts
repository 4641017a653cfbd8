// Faults injected into the real database, for tests of what a failure leaves behind and of what a failing
// request logs. A trigger refuses the inserts into, or updates or deletions of, the rows of one table whose column holds
// one value (a test's own e-mail or id), so that test files running at the same time against the same database
// are not affected. Nothing in the code under test is replaced: the database itself refuses the write, as a
// full disk or a broken constraint would.
import { randomBytes } from "node:crypto";
import { env } from "@/env";
import { write } from "@/db/client";

const literal = (value: string | number) => (typeof value === "number" ? String(Math.trunc(value)) : `'${value.replace(/'/g, "''")}'`);

/** Makes the database refuse inserts into `table` where `column` = `value`; returns the undo. */
export function refuseInserts(table: string, column: string, value: string | number): Promise<() => Promise<void>> {
  return refuseWrites("INSERT", table, column, value);
}

/** Makes the database refuse updates of the rows of `table` where `column` = `value`; returns the undo. */
export function refuseUpdates(table: string, column: string, value: string | number): Promise<() => Promise<void>> {
  return refuseWrites("UPDATE", table, column, value);
}

/** Makes the database refuse deletions of the rows of `table` where `column` = `value`; returns the undo. */
export function refuseDeletes(table: string, column: string, value: string | number): Promise<() => Promise<void>> {
  return refuseWrites("DELETE", table, column, value);
}

async function refuseWrites(on: "INSERT" | "UPDATE" | "DELETE", table: string, column: string, value: string | number): Promise<() => Promise<void>> {
  const name = `test_refuse_${randomBytes(6).toString("hex")}`;
  const condition = `${on === "INSERT" ? "NEW" : "OLD"}."${column}" = ${literal(value)}`;
  if (env().database.kind === "postgresql") {
    await write(async (tx) => {
      await tx.$executeRawUnsafe(
        `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF ${condition} THEN RAISE EXCEPTION 'refused by a test'; END IF; IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END $$`,
      );
      await tx.$executeRawUnsafe(`CREATE TRIGGER ${name} BEFORE ${on} ON "${table}" FOR EACH ROW EXECUTE FUNCTION ${name}()`);
    });
    return async () => {
      await write(async (tx) => {
        await tx.$executeRawUnsafe(`DROP TRIGGER ${name} ON "${table}"`);
        await tx.$executeRawUnsafe(`DROP FUNCTION ${name}()`);
      });
    };
  }
  await write((tx) => tx.$executeRawUnsafe(`CREATE TRIGGER ${name} BEFORE ${on} ON "${table}" WHEN ${condition} BEGIN SELECT RAISE(ABORT, 'refused by a test'); END`));
  return async () => {
    await write((tx) => tx.$executeRawUnsafe(`DROP TRIGGER ${name}`));
  };
}
