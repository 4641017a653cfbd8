// Which database errors were caused by a value the caller sent (a 400, never a 500) and which are the
// database's failure to answer (a 503): the shapes each layer gives them (src/db/errors.ts). The real
// errors are met in src/http/input-isolation.int.test.ts and src/server/outage*.int.test.ts.
import { describe, expect, it } from "vitest";
import { databaseFailure, databaseInputError } from "@/db/errors";

const prisma = (code: string, cause?: Record<string, unknown>) =>
  Object.assign(new Error("prisma"), { code, meta: cause ? { driverAdapterError: { name: "DriverAdapterError", cause } } : {} });

describe("databaseInputError", () => {
  it("knows a refused value wherever a layer puts it: Prisma's wrap of the SQLSTATE, Prisma's own codes, the pg driver, SQLite", () => {
    expect(databaseInputError(prisma("P2039", { originalCode: "22021", kind: "postgres", code: "22021" }))).toBe(true);
    expect(databaseInputError(prisma("P2039", { originalCode: "22P05", kind: "postgres" }))).toBe(true);
    for (const code of ["P2000", "P2006", "P2007", "P2020", "P2033"]) expect(databaseInputError(prisma(code))).toBe(true);
    expect(databaseInputError(Object.assign(new Error("invalid byte sequence"), { code: "22021" }))).toBe(true);
    expect(databaseInputError(Object.assign(new Error("wrapped"), { cause: Object.assign(new Error("pg"), { code: "22001" }) }))).toBe(true);
    expect(databaseInputError(Object.assign(new Error("string or blob too big"), { code: "SQLITE_TOOBIG" }))).toBe(true);
    expect(databaseFailure(prisma("P2039", { originalCode: "22021" }))).toBeNull();
  });

  it("is false for what is not a refused value: a conflict, contention, an outage, anything else", () => {
    expect(databaseInputError(prisma("P2002", { originalCode: "23505" }))).toBe(false);
    expect(databaseInputError(prisma("P2034", { originalCode: "40001" }))).toBe(false);
    expect(databaseInputError(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }))).toBe(false);
    expect(databaseInputError(new Error("22021 in a message is not a code"))).toBe(false);
    expect(databaseInputError(null)).toBe(false);
    expect(databaseInputError("22021")).toBe(false);
  });
});
