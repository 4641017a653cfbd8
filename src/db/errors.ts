// Which failures mean "the database cannot answer right now" (docs/rules/operations.md#database-outages: a 503
// with Retry-After, never a 500, and the service recovers by itself). Two kinds:
// - "busy": contention the next attempt will likely not meet (Prisma P1008/P2028/P2034, SQLITE_BUSY, a
//   serialization failure or deadlock): Retry-After 1;
// - "unavailable": the database cannot be reached or stopped answering: connection refused, timed out or
//   dropped, PostgreSQL shutting down or starting up (SQLSTATE class 08, 57P01-57P03), a statement cancelled by
//   statement_timeout, too many connections, an SQLite file that cannot be opened or read (SQLITE_CANTOPEN,
//   SQLITE_IOERR, SQLITE_FULL, SQLITE_NOTADB, SQLITE_READONLY): Retry-After 5.
// The facts are looked for where each layer puts them: Prisma's error code and its
// meta.driverAdapterError.cause (adapter-pg's `kind`, and the SQLSTATE as `code`/`originalCode`), the pg
// driver's own errors (no code, only a message: "Connection terminated unexpectedly", "... due to connection
// timeout", "Query read timeout"), Node's socket codes, and better-sqlite3's SQLITE_* codes; and the same in
// every `cause` below. Seen here with Prisma 7.10, adapter-pg and pg 8 (src/server/outage*.int.test.ts).
//
// And which failures were caused by a value the caller sent (databaseInputError): the database refused the
// value itself, a "data exception" (SQLSTATE class 22: 22021 invalid byte sequence, the U+0000 that
// PostgreSQL text cannot hold; 22P05 untranslatable character; 22001 too long; 22003 out of range; 22P02
// invalid text representation; 22007/22008 a date), Prisma's own codes for such values (P2000 too long for
// the column, P2006 not valid, P2007 data validation, P2020 out of range, P2033 too large a number), or
// SQLite's SQLITE_TOOBIG. Prisma 7 with adapter-pg wraps 22021 as P2039 with the SQLSTATE in
// meta.driverAdapterError.cause (code, originalCode). These are a 400 (src/http/route.ts), never a 500: the
// input rule (src/http/input-text.ts) refuses such values before they are sent, and this is what remains
// when one gets through.

export type DatabaseFailure = "busy" | "unavailable";

const BUSY_CODES = new Set(["P1008", "P2028", "P2034", "40001", "40P01", "55P03"]);
const UNAVAILABLE_CODES = new Set([
  // Prisma: can't reach, timed out, server closed the connection, pool timeout, too many connections.
  "P1001", "P1002", "P1017", "P2024", "P2037",
  // PostgreSQL: admin/crash shutdown, cannot connect now (starting up, shutting down), statement timeout,
  // idle-in-transaction timeout, too many connections, out of resources.
  "57P01", "57P02", "57P03", "57014", "25P03", "53300", "53100", "53200",
  // Node's socket errors.
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ECONNABORTED",
]);
const BUSY_KINDS = new Set(["TransactionWriteConflict"]);
const UNAVAILABLE_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);

const BUSY_MESSAGE = /SQLITE_BUSY|database is locked|could not serialize access|deadlock detected/i;
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Can't reach database server|the database system is (?:starting up|shutting down|in recovery mode)|terminating connection due to administrator command|unable to open database file|disk I\/O error/i;

function classifyCode(code: string): DatabaseFailure | null {
  if (BUSY_CODES.has(code) || /^SQLITE_(BUSY|LOCKED)/.test(code)) return "busy";
  if (UNAVAILABLE_CODES.has(code) || /^08/.test(code) || /^SQLITE_(CANTOPEN|IOERR|FULL|NOTADB|READONLY|PROTOCOL)/.test(code)) return "unavailable";
  return null;
}

type Facts = { code?: unknown; kind?: unknown; originalCode?: unknown; message?: unknown; cause?: unknown; meta?: unknown };

/** Visits `error` and what it wraps (cause, Prisma's meta.driverAdapterError), at most 16 objects, until
 * `visit` answers true. */
function walk(error: unknown, visit: (facts: Facts) => boolean): void {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < 16) {
    const item = queue.shift();
    if (item === null || typeof item !== "object" || seen.has(item)) continue;
    seen.add(item);
    const facts = item as Facts;
    if (visit(facts)) return;
    queue.push(facts.cause);
    const meta = facts.meta as { driverAdapterError?: unknown } | undefined;
    if (meta && typeof meta === "object") queue.push(meta.driverAdapterError);
  }
}

const INPUT_CODES = new Set(["P2000", "P2006", "P2007", "P2020", "P2033", "SQLITE_TOOBIG"]);

/** Whether the database refused a value that a request carried (see above). */
export function databaseInputError(error: unknown): boolean {
  let found = false;
  walk(error, (facts) => {
    for (const code of [facts.code, facts.originalCode]) {
      if (typeof code === "string" && (INPUT_CODES.has(code) || /^22[0-9A-Z]{3}$/.test(code))) found = true;
    }
    return found;
  });
  return found;
}

/** "busy", "unavailable", or null for anything that is not the database's failure to answer. */
export function databaseFailure(error: unknown): DatabaseFailure | null {
  let found: DatabaseFailure | null = null;
  let unavailable = false;
  walk(error, (facts) => {
    const verdicts: Array<DatabaseFailure | null> = [];
    for (const code of [facts.code, facts.originalCode]) if (typeof code === "string") verdicts.push(classifyCode(code));
    if (typeof facts.kind === "string") {
      verdicts.push(BUSY_KINDS.has(facts.kind) ? "busy" : UNAVAILABLE_KINDS.has(facts.kind) ? "unavailable" : null);
    }
    if (typeof facts.message === "string") {
      verdicts.push(UNAVAILABLE_MESSAGE.test(facts.message) ? "unavailable" : BUSY_MESSAGE.test(facts.message) ? "busy" : null);
    }
    // "unavailable" wins over "busy": a connection that is gone is not contention.
    if (verdicts.includes("unavailable")) unavailable = true;
    else if (verdicts.includes("busy")) found = "busy";
    return unavailable;
  });
  return unavailable ? "unavailable" : found;
}
