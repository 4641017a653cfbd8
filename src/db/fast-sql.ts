// The statements of the hot paths, in one place and below Prisma (docs/design.md): a Prisma query costs 0.2-1
// ms of CPU where a prepared statement on the driver costs microseconds, and these run on every bearer
// request, introspection and token request. Prisma stays for everything else. Each is ONE statement (on
// SQLite, one synchronous transaction, which nothing can interleave), on the connection Prisma already holds
// (src/db/client.ts):
// - bearerToken: the access token joined with what the handler needs next (the user, the client's
//   first-party flag) and the grant's revocation (docs/rules/endpoints.md#api-authentication);
// - tokenByValue: an access or refresh token by value for introspection and revocation (RFC 7662, 7009);
// - rotateRefreshToken: the whole refresh rotation (RFC 6749 6, RFC 9700 4.14.2;
//   docs/rules/tokens.md#refresh), and on PostgreSQL rotateAtOnce, the same as one statement for a refresh
//   that narrows no scope;
// - clientByClientId: the client of a token, revocation or introspection request, the first read of each
//   (RFC 6749 2.3.1), and userByEmail, the password grant's resource owner (RFC 6749 4.3.2). Every column,
//   typed as Prisma types it (from the declared column types), so that a column added to the model needs
//   nothing here; on PostgreSQL a registered client's row is kept under the token cache's lease
//   (src/db/pg-token-cache.ts), so that a token request makes no round trip for its client;
// - reserveSlots, releaseSlots: the limiter's reservation of one slot per key, and giving them back
//   (src/limits/limiter.ts holds the rules): every password check and every other limited attempt takes one;
//   reserveSlotsWithUser, the password grant's reservation together with its resource owner by e-mail (the
//   columns the grant needs), one statement on PostgreSQL, so that the two reads before the password hash
//   cost one round trip;
// - startGrant: a new grant, its first tokens and its audit event (password, implicit and client credentials
//   grants), only for a user whose address is confirmed (docs/rules/accounts.md#unconfirmed-accounts: the
//   rule is src/oauth/tokens.ts's; the statement checks it where it writes), and the password grant's limiter
//   slots given back in the same commit;
// - exchangeCode and issueForDeviceCode: the claim of an authorization code (RFC 6749 4.1.3) or an approved
//   device code (RFC 8628 3.5) together with what it issues: the grant's tokens (a new grant for a device
//   code), the token.issued event, the same confirmed-address check; authorizationCodeByDigest and
//   deviceAuthorizationByDigest read them first (docs/rules/tokens.md#authorization-codes,
//   docs/rules/tokens.md#device-flow);
// - rememberDpopProof: a DPoP proof's jti, refused when any instance saw it before (RFC 9449 11.1);
//   rememberClientAssertion, the same for a client assertion's jti (RFC 7523 3 item 7).
// Tokens bound to a DPoP key (RFC 9449 6) carry the key's thumbprint (`jkt`) in their row: the bearer read
// returns it, and every insert writes it (docs/rules/tokens.md#dpop). So does every token's audience, the
// resource it is for (RFC 8707, docs/rules/agents.md#audience): the bearer read returns it with the rest, and a
// rotation copies it to the new pair.
// The rules stay in the domain files that call these; this file only reads and writes.
//
// Single use holds as before. SQLite: a rotation is one BEGIN IMMEDIATE transaction that reads, decides,
// claims and issues while holding the database's write lock (rotations asked for in one turn of the event
// loop share the transaction, a savepoint each); in-process it also excludes Prisma's transactions (db.ts),
// across processes SQLite's lock does. PostgreSQL: one statement locks the grant row (as revocation does
// first: src/oauth/tokens.ts revokeGrantInTx), claims the token only if it is still unused and unrevoked, and
// inserts the new tokens only from that claim, so of N concurrent uses exactly one inserts; a revocation
// either waits for the rotation and then revokes its new tokens, or wins the grant row first and the rotation
// claims nothing. Lookups by key on PostgreSQL asked for in one turn of the event loop share a statement.
// Issuing the same way (docs/design.md#the-data-layer): on SQLite every grant start, code exchange and
// device-code claim joins the rotations' group commit (one BEGIN IMMEDIATE for what one turn of the event
// loop asked for, a savepoint each; a claim that finds its code used undoes only its own savepoint); on
// PostgreSQL each is one statement, whose claim is a conditional UPDATE that every insert depends on, so of N
// concurrent exchanges of one code exactly one inserts tokens (the others wait for the row and find it used).
import type BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import type { AuthorizationCode, Client, DeviceAuthorization, User } from "@/generated/sqlite/client";
import type { BearerToken } from "@/db/bearer-token";
import { connectedDriver, driver } from "@/db/client";
import { databaseFailure } from "@/db/errors";
import { env } from "@/env";
import { log } from "@/observability/log";
import { clientCacheHits, tokenCacheHits } from "@/observability/metrics";

/** A live access token as the bearer read finds it (possibly shared from the token cache: read-only). */
export type { BearerToken };

export type TokenByValue = {
  kind: "access_token" | "refresh_token";
  id: number;
  grantId: number;
  clientId: number;
  scopes: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  usedAt: Date | null;
  jkt: string | null;
  audience: string;
  user: { id: number; email: string };
};

export type RefreshTokenRow = {
  id: number;
  grantId: number;
  clientId: number;
  userId: number;
  scopes: string;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
  jkt: string | null;
  audience: string;
  /** Whether the token's user has confirmed their address (docs/rules/accounts.md#unconfirmed-accounts). */
  userConfirmed: boolean;
};

/** A token row to insert (its digest; the value itself is never stored). */
export type NewTokenRow = { digest: string; grantId: number; clientId: number; userId: number; scopes: string; createdAt: Date; expiresAt: Date; jkt: string | null; audience: string };

/** A security event to write in the rotation's own transaction (src/audit/record-event.ts auditRow()). */
export type AuditRow = { type: string; at: Date; userId: number | null; clientId: string | null; ip: string | null; detail: string | null };

export type RotationPlan = { at: Date; access: NewTokenRow; refresh: NewTokenRow; audit: AuditRow | null };

/** A grant to start, with its first tokens (their grantId is the new grant's) and its audit event. */
export type NewGrant = {
  grant: { clientId: number; userId: number; grantType: string; scopes: string; createdAt: Date; authTime?: Date | null };
  access: Omit<NewTokenRow, "grantId">;
  refresh: Omit<NewTokenRow, "grantId"> | null;
  audit: AuditRow | null;
  /** Limiter attempts to give back in the same commit (a right password's slots: src/limits/limiter.ts). */
  releaseAttempts?: readonly number[];
};

/** The claim was lost: another use took the token first, or the grant was revoked meanwhile. */
export class LostRotation extends Error {
  constructor(readonly grantId: number) {
    // Stryker disable next-line StringLiteral: its callers test instanceof; the message is never read nor sent
    super("refresh token claimed concurrently");
  }
}

// --- SQLite -----------------------------------------------------------------------------------------------

// Prisma's better-sqlite3 adapter stores DateTime as ISO 8601 text with "+00:00"; text in that one format
// compares in time order. Written from the text of the current second (every bearer read writes the time).
const YEAR_10000 = 253_402_300_800_000;
let second = { at: NaN, text: "" };
export function sqliteTime(date: Date): string {
  return sqliteTimeMs(date.getTime());
}

/** sqliteTime() of a time in milliseconds since the epoch (the clock's nowMs(): no Date made for it). */
export function sqliteTimeMs(ms: number): string {
  if (!(ms >= 0 && ms < YEAR_10000)) return new Date(ms).toISOString().replace("Z", "+00:00"); // (six-digit years)
  const millis = ms % 1000;
  const at = ms - millis;
  if (at !== second.at) second = { at, text: new Date(at).toISOString().slice(0, 20) }; // "YYYY-MM-DDTHH:MM:SS."
  return second.text + (millis < 10 ? "00" : millis < 100 ? "0" : "") + millis + "+00:00";
}
const sqliteDate = (value: string | null) => (value === null ? null : new Date(value));

const SQL = {
  bearer: `SELECT t."userId", t."clientId", t."scopes", u."name" AS "userName", u."email" AS "userEmail", c."firstParty", t."jkt", t."expiresAt", t."audience"
    FROM "AccessToken" t
    JOIN "Grant" g ON g."id" = t."grantId"
    JOIN "User" u ON u."id" = t."userId"
    JOIN "Client" c ON c."id" = t."clientId"
    WHERE t."digest" = ? AND t."revokedAt" IS NULL AND t."expiresAt" > ? AND g."revokedAt" IS NULL`,
  byValue: `SELECT * FROM (
      SELECT 'access_token' AS "kind", t."id", t."grantId", t."clientId", t."scopes", t."createdAt", t."expiresAt",
        t."revokedAt", NULL AS "usedAt", t."jkt", t."audience", u."id" AS "userId", u."email" AS "userEmail"
      FROM "AccessToken" t JOIN "User" u ON u."id" = t."userId" WHERE t."digest" = ?
      UNION ALL
      SELECT 'refresh_token', r."id", r."grantId", r."clientId", r."scopes", r."createdAt", r."expiresAt",
        r."revokedAt", r."usedAt", r."jkt", r."audience", u."id", u."email"
      FROM "RefreshToken" r JOIN "User" u ON u."id" = r."userId" WHERE r."digest" = ?
    ) ORDER BY CASE "kind" WHEN ? THEN 0 ELSE 1 END LIMIT 1`,
  refresh: `SELECT r."id", r."grantId", r."clientId", r."userId", r."scopes", r."expiresAt", r."usedAt", r."revokedAt", r."jkt", r."audience",
      u."emailVerifiedAt" IS NOT NULL AS "userConfirmed"
    FROM "RefreshToken" r JOIN "User" u ON u."id" = r."userId" WHERE r."digest" = ?`,
  touchGrant: `UPDATE "Grant" SET "lastUsedAt" = ? WHERE "id" = ? AND "revokedAt" IS NULL`,
  claim: `UPDATE "RefreshToken" SET "usedAt" = ? WHERE "id" = ? AND "usedAt" IS NULL AND "revokedAt" IS NULL`,
  insertAccess: `INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  insertRefresh: `INSERT INTO "RefreshToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  rememberDpop: `INSERT INTO "DpopProof" ("key", "expiresAt") VALUES (?, ?) ON CONFLICT ("key") DO NOTHING`,
  rememberAssertion: `INSERT INTO "ClientAssertion" ("key", "expiresAt") VALUES (?, ?) ON CONFLICT ("key") DO NOTHING`,
  insertAudit: `INSERT INTO "AuditEvent" ("type", "at", "userId", "clientId", "ip", "detail") VALUES (?, ?, ?, ?, ?, ?)`,
  client: `SELECT * FROM "Client" WHERE "clientId" = ?`,
  userByEmail: `SELECT * FROM "User" WHERE "email" = ?`,
  insertGrant: `INSERT INTO "Grant" ("clientId", "userId", "grantType", "scopes", "createdAt", "lastUsedAt", "authTime") VALUES (?, ?, ?, ?, ?, ?, ?)`,
  codeByDigest: `SELECT * FROM "AuthorizationCode" WHERE "digest" = ?`,
  deviceByDigest: `SELECT * FROM "DeviceAuthorization" WHERE "deviceCodeDigest" = ?`,
  claimCode: `UPDATE "AuthorizationCode" SET "usedAt" = ? WHERE "id" = ? AND "usedAt" IS NULL`,
  claimDevice: `UPDATE "DeviceAuthorization" SET "usedAt" = ? WHERE "id" = ? AND "status" = 'approved' AND "usedAt" IS NULL AND "userId" = ?`,
  userConfirmed: `SELECT 1 FROM "User" WHERE "id" = ? AND "emailVerifiedAt" IS NOT NULL`,
  // The max-th most recent attempt of a key in its window (OFFSET max - 1): found only when the key is full.
  fullAt: `SELECT "createdAt" FROM "FailedAttempt" WHERE "key" = ? AND "createdAt" > ? ORDER BY "createdAt" DESC LIMIT 1 OFFSET ?`,
  insertAttempt: `INSERT INTO "FailedAttempt" ("key", "createdAt") VALUES (?, ?)`,
  deleteAttempt: `DELETE FROM "FailedAttempt" WHERE "id" = ?`,
} as const;

type Statements = Record<keyof typeof SQL, BetterSqlite3.Statement>;
/** Rows as arrays (columns in the statement's order): no object with named keys built per row. */
const RAW_ROWS: ReadonlySet<keyof typeof SQL> = new Set(["bearer"]);
const prepared = new WeakMap<BetterSqlite3.Database, Statements>();

/** Prepared once per connection; plain numbers, not the BigInts the adapter's connection defaults to. */
function statements(connection: BetterSqlite3.Database): Statements {
  let found = prepared.get(connection);
  if (!found) {
    found = Object.fromEntries(
      Object.entries(SQL).map(([name, sql]) => {
        const statement = connection.prepare(sql);
        if (!statement.reader) return [name, statement];
        return [name, RAW_ROWS.has(name as keyof typeof SQL) ? statement.safeIntegers(false).raw(true) : statement.safeIntegers(false)];
      }),
    ) as Statements;
    prepared.set(connection, found);
  }
  return found;
}

type SqliteDriver = Extract<Awaited<ReturnType<typeof driver>>, { kind: "sqlite" }>;

// The bearer read runs on the reader connection (db.ts), so it never waits for a Prisma transaction nor sees
// inside one. Each read transaction costs SQLite file-lock system calls (about 4 µs: a read mark on the WAL
// index, set and cleared, and the file's size), more than the statement itself; so the reads made in one
// synchronous run (the requests served together in one turn of the event loop, src/server/fast-lane.ts) share
// one read transaction, opened by the first that misses the cache and ended by a microtask before any of them
// goes on. Each request still sees the database as of a moment after it arrived: nothing another request,
// process or instance commits later than that can have been answered to a client yet.
//
// Live tokens the reader has found are kept (a validated-token cache, docs/design.md) for as long as nothing
// has been committed since. The first read of each run asks SQLite's data_version (a read transaction of its
// own when every read of the run hits), which differs from the last answer whenever any other connection has
// committed anything to the file (Prisma's connection in this process, another worker, another process such as
// the CLI; the reader itself writes nothing, it is query_only), and a change empties the cache. It is asked
// before any statement of the run, so a token the run reads and keeps is at least as recent as the version it
// is kept under (a commit in between empties the cache at the next run, for nothing). So a token revoked,
// deleted or expired, its grant revoked, its user renamed or its client changed is never answered from the
// cache to a request that arrived after the commit, on any instance. Only live tokens are kept, with their
// expiry (checked on every hit against the clock), at most TOKEN_CACHE_SIZE of them (env.ts; 0 turns the cache
// off), by digest, the oldest dropped first. PostgreSQL has no such cheap question (an instance would need a
// round trip to learn of another's commit): there the instances hold a lease on their caches instead
// (src/db/pg-token-cache.ts).
type CachedToken = { token: BearerToken; expiresAtMs: number };
type Snapshot = {
  /** Whether this synchronous run has opened the read transaction and checked data_version (end() is queued). */
  running: boolean;
  begin: BetterSqlite3.Statement;
  end: () => void;
  dataVersion: BetterSqlite3.Statement;
  version: number;
  tokens: Map<string, CachedToken>;
};
const snapshots = new WeakMap<BetterSqlite3.Database, Snapshot>();

function snapshotOf(reader: BetterSqlite3.Database): Snapshot {
  const commit = reader.prepare("COMMIT");
  const snapshot: Snapshot = {
    running: false,
    begin: reader.prepare("BEGIN"),
    end: () => {
      snapshot.running = false;
      try {
        // Stryker disable next-line LogicalOperator: the reader is open whenever this runs; a COMMIT with no transaction open would only throw, and the catch below only logs
        if (reader.open && reader.inTransaction) commit.run();
      } catch (error) {
        log.warn("ending a read transaction failed", { error: String(error) });
      }
    },
    dataVersion: reader.prepare("PRAGMA data_version").pluck(),
    version: NaN,
    tokens: new Map(),
  };
  snapshots.set(reader, snapshot);
  return snapshot;
}

/** The reader's snapshot for this synchronous run: the first read of a run opens it and checks the cache. */
function currentSnapshot(reader: BetterSqlite3.Database): Snapshot {
  const snapshot = snapshots.get(reader) ?? snapshotOf(reader);
  if (!snapshot.running) {
    // Stryker disable next-line BooleanLiteral: asked again within one synchronous run, data_version is the same (nothing commits in between): only slower
    snapshot.running = true;
    queueMicrotask(snapshot.end);
    const version = snapshot.dataVersion.get() as number;
    if (version !== snapshot.version) {
      snapshot.tokens.clear();
      snapshot.version = version;
    }
  }
  return snapshot;
}

/**
 * The reader's data_version as this synchronous run asked it (before any statement of the run): the
 * collection-page cache keeps pages under it, as the token cache keeps tokens (src/db/page-cache.ts).
 */
export function readerVersion(reader: BetterSqlite3.Database): number {
  return currentSnapshot(reader).version;
}

/** A read on SQLite: at once, unless a Prisma transaction is open on the connection (then after it). */
function sqliteRead<T>(d: SqliteDriver, read: (s: Statements) => T): T | Promise<T> {
  const s = statements(d.connection);
  return d.connection.inTransaction ? d.exclusive(() => read(s)) : read(s);
}

const tokenRowArgs = (row: NewTokenRow) => [row.digest, row.grantId, row.clientId, row.userId, row.scopes, sqliteTime(row.createdAt), sqliteTime(row.expiresAt), row.jkt, row.audience];

type RawRefreshRow = Omit<RefreshTokenRow, "expiresAt" | "usedAt" | "revokedAt" | "userConfirmed"> &
  Record<"expiresAt" | "usedAt" | "revokedAt", string | null> & { userConfirmed: number };
type PendingRotation = { digest: string; decide: (row: RefreshTokenRow | null) => RotationPlan };

/** One rotation, inside the batch's transaction (a savepoint of its own: a refusal undoes only itself). */
function rotateOne(s: Statements, { digest, decide }: PendingRotation): void {
  const raw = s.refresh.get(digest) as RawRefreshRow | undefined;
  const row = raw
    ? { ...raw, expiresAt: sqliteDate(raw.expiresAt)!, usedAt: sqliteDate(raw.usedAt), revokedAt: sqliteDate(raw.revokedAt), userConfirmed: raw.userConfirmed === 1 }
    : null;
  const plan = decide(row); // throws to refuse; nothing has been written
  const at = sqliteTime(plan.at);
  if (s.touchGrant.run(at, row!.grantId).changes !== 1) throw new LostRotation(row!.grantId);
  if (s.claim.run(at, row!.id).changes !== 1) throw new LostRotation(row!.grantId);
  s.insertAccess.run(...tokenRowArgs(plan.access));
  s.insertRefresh.run(...tokenRowArgs(plan.refresh));
  if (plan.audit) {
    const a = plan.audit;
    s.insertAudit.run(a.type, sqliteTime(a.at), a.userId, a.clientId, a.ip, a.detail);
  }
}

// Group commit: the writes asked for within one turn of the event loop (rotations, grant starts, code
// exchanges, device-code claims) run one after the other in ONE BEGIN IMMEDIATE transaction, each in a
// savepoint of its own, so that they share the commit (the write to the WAL file, which costs more than the
// statements). Each stays atomic and single use holds as with one transaction each: they run in order, and a
// later one sees what an earlier one wrote. A write that throws undoes its own savepoint only.
type GroupedWrite = { run: (s: Statements) => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void };
let pending: GroupedWrite[] = [];
/** Grouped writes not yet run (queued, or in batches waiting for the connection), and those batches. */
const waiting = { writes: 0, batches: 0 };

/**
 * How many grouped writes wait to run (queued for the next batch, or in a batch), and how many batches have
 * asked for the connection's lock (each waits for it as one transaction) and not finished: for
 * src/testing/race.ts, which lines requests up at their claims.
 */
export function groupedWritesWaiting(): { writes: number; batches: number } {
  return { writes: waiting.writes, batches: waiting.batches };
}

function groupedWrite<T>(d: SqliteDriver, run: (s: Statements) => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    pending.push({ run, resolve: resolve as (value: unknown) => void, reject });
    waiting.writes++;
    if (pending.length === 1) setImmediate(() => void flushWrites(d));
  });
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

async function flushWrites(d: SqliteDriver): Promise<void> {
  const batch = pending;
  pending = [];
  waiting.batches++;
  const s = statements(d.connection);
  const one = d.connection.transaction((write: GroupedWrite) => write.run(s)); // nested: a savepoint
  const all = d.connection.transaction(() =>
    batch.map((write): Outcome => {
      try {
        return { ok: true, value: one(write) };
      } catch (error) {
        return { ok: false, error: error ?? new Error("write failed") };
      }
    }),
  );
  let outcomes: Outcome[];
  try {
    outcomes = await d.exclusive(() => all.immediate());
  } catch (error) {
    outcomes = batch.map(() => ({ ok: false, error })); // the batch could not commit (e.g. another process held the lock)
  } finally {
    waiting.batches--;
    waiting.writes -= batch.length;
  }
  batch.forEach((write, i) => {
    const outcome = outcomes[i]!;
    if (outcome.ok) write.resolve(outcome.value);
    else write.reject(outcome.error);
  });
}

function sqliteRotate(d: SqliteDriver, digest: string, decide: (row: RefreshTokenRow | null) => RotationPlan): Promise<void> {
  return groupedWrite(d, (s) => rotateOne(s, { digest, decide }));
}

// --- PostgreSQL -------------------------------------------------------------------------------------------

// timestamp(3) columns hold UTC wall time (as Prisma writes them). Parameters go as ISO text, whose "Z" a
// timestamp without time zone ignores; results are read as UTC, whatever the process's time zone.
const TIMESTAMP_OID = 1114;
/** pg's type parsers with timestamp(3) read as UTC (src/db/collection-sql.ts reads with them too). */
export const pgTypes = {
  getTypeParser: (oid: number, format?: string) =>
    oid === TIMESTAMP_OID ? (value: string) => new Date(value.replace(" ", "T") + "Z") : pg.types.getTypeParser(oid, format as "text"),
} as pg.CustomTypesConfig;
const pgTime = (date: Date) => date.toISOString();

const PG = {
  // Several digests at once (see bearerToken); the expiry is compared per request, with its own clock.
  bearer: `SELECT t."digest", t."expiresAt", t."userId", t."clientId", t."scopes", u."name" AS "userName", u."email" AS "userEmail", c."firstParty", t."jkt", t."audience"
    FROM "AccessToken" t
    JOIN "Grant" g ON g."id" = t."grantId"
    JOIN "User" u ON u."id" = t."userId"
    JOIN "Client" c ON c."id" = t."clientId"
    WHERE t."digest" = ANY($1::text[]) AND t."revokedAt" IS NULL AND g."revokedAt" IS NULL`,
  byValue: `SELECT * FROM (
      SELECT 'access_token' AS "kind", t."id", t."grantId", t."clientId", t."scopes", t."createdAt", t."expiresAt",
        t."revokedAt", NULL::timestamp(3) AS "usedAt", t."jkt", t."audience", u."id" AS "userId", u."email" AS "userEmail"
      FROM "AccessToken" t JOIN "User" u ON u."id" = t."userId" WHERE t."digest" = $1
      UNION ALL
      SELECT 'refresh_token', r."id", r."grantId", r."clientId", r."scopes", r."createdAt", r."expiresAt",
        r."revokedAt", r."usedAt", r."jkt", r."audience", u."id", u."email"
      FROM "RefreshToken" r JOIN "User" u ON u."id" = r."userId" WHERE r."digest" = $1
    ) found ORDER BY CASE "kind" WHEN $2 THEN 0 ELSE 1 END LIMIT 1`,
  // These three and `bearer` take several keys at once (see pgLookup).
  refresh: `SELECT r."digest", r."id", r."grantId", r."clientId", r."userId", r."scopes", r."expiresAt", r."usedAt", r."revokedAt", r."jkt", r."audience",
      u."emailVerifiedAt" IS NOT NULL AS "userConfirmed"
    FROM "RefreshToken" r JOIN "User" u ON u."id" = r."userId" WHERE r."digest" = ANY($1::text[])`,
  rememberDpop: `INSERT INTO "DpopProof" ("key", "expiresAt") VALUES ($1, $2::timestamp(3)) ON CONFLICT ("key") DO NOTHING RETURNING "id"`,
  rememberAssertion: `INSERT INTO "ClientAssertion" ("key", "expiresAt") VALUES ($1, $2::timestamp(3)) ON CONFLICT ("key") DO NOTHING RETURNING "id"`,
  client: `SELECT * FROM "Client" WHERE "clientId" = ANY($1::text[])`,
  userByEmail: `SELECT * FROM "User" WHERE "email" = ANY($1::text[])`,
  reserveSlots: `SELECT "ids", "wait_ms" FROM "limiter_reserve"($1::text[], $2::int[], $3::bigint[], $4::timestamp(3))`,
  // The same reservation with the user of an e-mail, whether it passed or not (the function's one row, joined).
  reserveSlotsWithUser: `SELECT r."ids", r."wait_ms", u."id", u."passwordHash"
    FROM "limiter_reserve"($1::text[], $2::int[], $3::bigint[], $4::timestamp(3)) r LEFT JOIN "User" u ON u."email" = $5::text`,
  releaseSlots: `DELETE FROM "FailedAttempt" WHERE "id" = ANY($1::int[])`,
  // Nothing at all (no row) unless the user's address is confirmed.
  startGrant: `WITH g AS (
      INSERT INTO "Grant" ("clientId", "userId", "grantType", "scopes", "createdAt", "lastUsedAt")
      SELECT $1::int, $2::int, $3::text, $4::text, $5::timestamp(3), $5::timestamp(3)
      FROM "User" u WHERE u."id" = $2::int AND u."emailVerifiedAt" IS NOT NULL RETURNING "id"
    ), access AS (
      INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $6::text, g."id", $1::int, $2::int, $7::text, $5::timestamp(3), $8::timestamp(3), $16::text, $18::text FROM g RETURNING "id"
    ), refresh AS (
      INSERT INTO "RefreshToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $9::text, g."id", $1::int, $2::int, $10::text, $5::timestamp(3), $11::timestamp(3), $17::text, $18::text FROM g WHERE $9::text IS NOT NULL RETURNING "id"
    ), audit AS (
      INSERT INTO "AuditEvent" ("type", "at", "userId", "clientId", "ip", "detail")
      SELECT $12::text, $5::timestamp(3), $2::int, $13::text, $14::text, $15::text FROM g WHERE $12::text IS NOT NULL RETURNING "id"
    ), released AS (
      DELETE FROM "FailedAttempt" WHERE "id" = ANY($19::int[]) RETURNING "id"
    )
    SELECT "id" FROM g`,
  codeByDigest: `SELECT * FROM "AuthorizationCode" WHERE "digest" = ANY($1::text[])`,
  deviceByDigest: `SELECT * FROM "DeviceAuthorization" WHERE "deviceCodeDigest" = ANY($1::text[])`,
  // The code exchange (RFC 6749 4.1.3) as one statement. Locks as the rotation: the grant row first (touched
  // only while the code looks unused and the user's address is confirmed), then the claim of the code, then
  // inserts that exist only if the claim did. A second exchange racing this one waits for the grant row, then
  // for the code row, which it finds used: it claims and inserts nothing. A revocation (which writes the grant
  // row first) either waits and revokes these tokens, or wins and this claims nothing. Nothing is written
  // (but the grant's lastUsedAt) unless the code is claimed; "confirmed" says why when it is not.
  exchangeCode: `WITH g AS (
      UPDATE "Grant" SET "lastUsedAt" = $1::timestamp(3) WHERE "id" = $3::int AND "revokedAt" IS NULL
        AND EXISTS (SELECT 1 FROM "AuthorizationCode" WHERE "id" = $2::int AND "usedAt" IS NULL)
        AND EXISTS (SELECT 1 FROM "User" u WHERE u."id" = $4::int AND u."emailVerifiedAt" IS NOT NULL)
      RETURNING "id"
    ), claimed AS (
      UPDATE "AuthorizationCode" SET "usedAt" = $1::timestamp(3)
      WHERE "id" = $2::int AND "usedAt" IS NULL AND EXISTS (SELECT 1 FROM g) RETURNING "id"
    ), access AS (
      INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $6::text, $3::int, $5::int, $4::int, $7::text, $1::timestamp(3), $8::timestamp(3), $12::text, $14::text FROM claimed RETURNING "id"
    ), refresh AS (
      INSERT INTO "RefreshToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $9::text, $3::int, $5::int, $4::int, $10::text, $1::timestamp(3), $11::timestamp(3), $13::text, $14::text FROM claimed RETURNING "id"
    ), audit AS (
      INSERT INTO "AuditEvent" ("type", "at", "userId", "clientId", "ip", "detail")
      SELECT $15::text, $1::timestamp(3), $4::int, $16::text, $17::text, $18::text FROM claimed WHERE $15::text IS NOT NULL RETURNING "id"
    )
    SELECT (SELECT count(*) FROM claimed)::int AS "claimed",
      EXISTS (SELECT 1 FROM "User" u WHERE u."id" = $4::int AND u."emailVerifiedAt" IS NOT NULL) AS "confirmed"`,
  // An approved device code's claim (RFC 8628 3.5) and the grant, tokens and event it starts, as one
  // statement: everything inserted depends on the conditional claim, which a concurrent poll waits for and
  // then finds used. Nothing at all unless the user's address is confirmed ("confirmed" says so).
  issueForDeviceCode: `WITH claimed AS (
      UPDATE "DeviceAuthorization" SET "usedAt" = $1::timestamp(3)
      WHERE "id" = $2::int AND "status" = 'approved' AND "usedAt" IS NULL AND "userId" = $4::int
        AND EXISTS (SELECT 1 FROM "User" u WHERE u."id" = $4::int AND u."emailVerifiedAt" IS NOT NULL)
      RETURNING "id"
    ), g AS (
      INSERT INTO "Grant" ("clientId", "userId", "grantType", "scopes", "createdAt", "lastUsedAt", "authTime")
      SELECT $3::int, $4::int, $5::text, $6::text, $1::timestamp(3), $1::timestamp(3), $7::timestamp(3) FROM claimed RETURNING "id"
    ), access AS (
      INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $8::text, g."id", $3::int, $4::int, $9::text, $1::timestamp(3), $10::timestamp(3), $14::text, $16::text FROM g RETURNING "id"
    ), refresh AS (
      INSERT INTO "RefreshToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $11::text, g."id", $3::int, $4::int, $12::text, $1::timestamp(3), $13::timestamp(3), $15::text, $16::text FROM g RETURNING "id"
    ), audit AS (
      INSERT INTO "AuditEvent" ("type", "at", "userId", "clientId", "ip", "detail")
      SELECT $17::text, $1::timestamp(3), $4::int, $18::text, $19::text, $20::text FROM g WHERE $17::text IS NOT NULL RETURNING "id"
    )
    SELECT (SELECT "id" FROM g) AS "grantId",
      EXISTS (SELECT 1 FROM "User" u WHERE u."id" = $4::int AND u."emailVerifiedAt" IS NOT NULL) AS "confirmed"`,
  // The whole rotation of a request that narrows no scope, as one statement: the token is claimed only if it
  // is this client's, unused, unrevoked and unexpired, and its user's address is confirmed (the rules of
  // src/token-endpoint/grants/refresh-token.ts, which reads the token and says why when this claims nothing), and the
  // new pair takes its scopes. Locks as below: the grant row first, then the token.
  rotateAtOnce: `WITH rt AS (
      SELECT "id", "grantId" FROM "RefreshToken"
      WHERE "digest" = $1::text AND "clientId" = $2::int AND "usedAt" IS NULL AND "revokedAt" IS NULL AND "expiresAt" > $3::timestamp(3)
        AND ("jkt" IS NULL OR "jkt" = $11::text)
        AND EXISTS (SELECT 1 FROM "User" u WHERE u."id" = "RefreshToken"."userId" AND u."emailVerifiedAt" IS NOT NULL)
    ), g AS (
      UPDATE "Grant" SET "lastUsedAt" = $3::timestamp(3) FROM rt WHERE "Grant"."id" = rt."grantId" AND "Grant"."revokedAt" IS NULL
      RETURNING "Grant"."id"
    ), claimed AS (
      UPDATE "RefreshToken" r SET "usedAt" = $3::timestamp(3) FROM rt
      WHERE r."id" = rt."id" AND r."usedAt" IS NULL AND r."revokedAt" IS NULL AND EXISTS (SELECT 1 FROM g)
      RETURNING r."grantId", r."userId", r."scopes", r."jkt", r."audience"
    ), access AS (
      INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $4::text, c."grantId", $2::int, c."userId", c."scopes", $3::timestamp(3), $5::timestamp(3), $11::text, c."audience" FROM claimed c RETURNING "id"
    ), refresh AS (
      INSERT INTO "RefreshToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $6::text, c."grantId", $2::int, c."userId", c."scopes", $3::timestamp(3), $7::timestamp(3), COALESCE(c."jkt", $12::text), c."audience" FROM claimed c RETURNING "id"
    ), audit AS (
      INSERT INTO "AuditEvent" ("type", "at", "userId", "clientId", "ip", "detail")
      SELECT $8::text, $3::timestamp(3), c."userId", $9::text, $10::text, '{"scope":' || to_json(c."scopes")::text || '}'
      FROM claimed c WHERE $8::text IS NOT NULL RETURNING "id"
    )
    SELECT "userId", "scopes", "audience" FROM claimed`,
  // The grant row first (the InitPlan of `claimed` runs `g` before any token row is locked; `g` touches it
  // only while the token looks usable), then the claim, then inserts that exist only if the claim did.
  rotate: `WITH g AS (
      UPDATE "Grant" SET "lastUsedAt" = $1::timestamp(3) WHERE "id" = $2::int AND "revokedAt" IS NULL
        AND EXISTS (SELECT 1 FROM "RefreshToken" WHERE "id" = $3::int AND "usedAt" IS NULL AND "revokedAt" IS NULL)
      RETURNING "id"
    ), claimed AS (
      UPDATE "RefreshToken" SET "usedAt" = $1::timestamp(3)
      WHERE "id" = $3::int AND "usedAt" IS NULL AND "revokedAt" IS NULL AND EXISTS (SELECT 1 FROM g) RETURNING "id"
    ), access AS (
      INSERT INTO "AccessToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $4::text, $2::int, $5::int, $6::int, $7::text, $1::timestamp(3), $8::timestamp(3), $16::text, $18::text FROM claimed RETURNING "id"
    ), refresh AS (
      INSERT INTO "RefreshToken" ("digest", "grantId", "clientId", "userId", "scopes", "createdAt", "expiresAt", "jkt", "audience")
      SELECT $9::text, $2::int, $5::int, $6::int, $10::text, $1::timestamp(3), $11::timestamp(3), $17::text, $19::text FROM claimed RETURNING "id"
    ), audit AS (
      INSERT INTO "AuditEvent" ("type", "at", "userId", "clientId", "ip", "detail")
      SELECT $12::text, $1::timestamp(3), $6::int, $13::text, $14::text, $15::text FROM claimed WHERE $12::text IS NOT NULL RETURNING "id"
    )
    SELECT count(*)::int AS "claimed" FROM claimed`,
} as const;

/** Test hook (src/token-endpoint/grants/password-statements.int.test.ts): told of every statement sent to
 * PostgreSQL from this file, by name, so that a test can count a request's round trips. Unset in production:
 * one property read. */
export const fastSqlHooks: { onPgStatement?: (name: keyof typeof PG) => void } = {};

const pgQuery = async <T extends pg.QueryResultRow>(pool: pg.Pool, name: keyof typeof PG, values: unknown[]): Promise<T[]> => {
  fastSqlHooks.onPgStatement?.(name);
  return (await pool.query<T>({ name: `fast-sql-${name}`, text: PG[name], values, types: pgTypes })).rows;
};

async function pgRotate(pool: pg.Pool, digest: string, decide: (row: RefreshTokenRow | null) => RotationPlan): Promise<void> {
  const found = await pgLookup<RefreshTokenRow & { digest?: string }>(pool, "refresh", "digest", digest);
  if (found) delete found.digest;
  const row = found as RefreshTokenRow | null;
  const plan = decide(row); // throws to refuse; nothing has been written
  const { access, refresh, audit } = plan;
  const [result] = await pgQuery<{ claimed: number }>(pool, "rotate", [
    pgTime(plan.at), row!.grantId, row!.id,
    access.digest, access.clientId, access.userId, access.scopes, pgTime(access.expiresAt),
    refresh.digest, refresh.scopes, pgTime(refresh.expiresAt),
    audit?.type ?? null, audit?.clientId ?? null, audit?.ip ?? null, audit?.detail ?? null,
    access.jkt, refresh.jkt, access.audience, refresh.audience,
  ]);
  if (result?.claimed !== 1) throw new LostRotation(row!.grantId);
}

// Lookups by key on PostgreSQL are batched: those of one kind asked for within one turn of the event loop go
// to the database as one statement (WHERE key = ANY(...)). A round trip to PostgreSQL costs this process more
// CPU than everything else a bearer read does (the writes and reads on its socket, the protocol), so under
// load one round trip serves several requests; alone, a request still makes exactly one. Each request sees
// the database as of its own arrival or later, and gets a row of its own.
// One caller's key never fails another's lookup (docs/rules/endpoints.md#shared-work): a key that PostgreSQL
// text cannot take (U+0000: SQLSTATE 22021, which would fail the whole statement) matches no row, so it joins
// no batch and is answered "not found" at once; and a batch whose statement fails for anything but the
// database's failure to answer (src/db/errors.ts: that one is every caller's) is retried one key at a
// time, so that only the callers of the key the database refused get its error.
export type PendingLookup<R> = { key: string; resolve: (row: R | null) => void; reject: (error: unknown) => void };
type LookupName = "bearer" | "refresh" | "client" | "userByEmail" | "codeByDigest" | "deviceByDigest";
const pendingLookups = new Map<string, Array<PendingLookup<pg.QueryResultRow>>>();

/** A key PostgreSQL text cannot hold, and so no row can have. */
const unstorableKey = (key: string) => key.includes("\u0000");

function pgLookup<R extends pg.QueryResultRow>(pool: pg.Pool, name: LookupName, keyColumn: string, key: string): Promise<R | null> {
  if (unstorableKey(key)) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    let pending = pendingLookups.get(name);
    if (!pending) {
      pending = [];
      pendingLookups.set(name, pending);
      setImmediate(() => {
        const batch = pendingLookups.get(name)!;
        pendingLookups.delete(name);
        void settleLookups(pool, name, keyColumn, batch);
      });
    }
    pending.push({ key, resolve: resolve as (row: pg.QueryResultRow | null) => void, reject });
  });
}

function answerLookups(batch: ReadonlyArray<PendingLookup<pg.QueryResultRow>>, rows: pg.QueryResultRow[], keyColumn: string): void {
  const byKey = new Map(rows.map((row) => [String(row[keyColumn]), row]));
  for (const lookup of batch) {
    const row = byKey.get(lookup.key);
    lookup.resolve(row ? { ...row } : null);
  }
}

/**
 * Answers a batch of lookups (pgLookup): one statement for all their keys; when it fails for anything but the
 * database's failure to answer, one statement per key, one after the other, each failure going only to the
 * callers of its key. Exported for the tests of that isolation.
 */
export async function settleLookups(pool: pg.Pool, name: LookupName, keyColumn: string, batch: ReadonlyArray<PendingLookup<pg.QueryResultRow>>): Promise<void> {
  const keys = [...new Set(batch.map((lookup) => lookup.key))];
  try {
    answerLookups(batch, await pgQuery(pool, name, [keys]), keyColumn);
  } catch (error) {
    if (keys.length === 1 || databaseFailure(error) !== null) {
      for (const lookup of batch) lookup.reject(error);
      return;
    }
    for (const key of keys) {
      const callers = batch.filter((lookup) => lookup.key === key);
      try {
        answerLookups(callers, await pgQuery(pool, name, [[key]]), keyColumn);
      } catch (alone) {
        for (const lookup of callers) lookup.reject(alone);
      }
    }
  }
}

// --- The statements ---------------------------------------------------------------------------------------

/**
 * The live access token for a digest (not expired at `at`, neither it nor its grant revoked), or null. On
 * SQLite, once connected, the answer itself (the statement is synchronous: no promise, no await on the
 * bearer path); otherwise a promise of it. Callers `await` it either way.
 */
export function bearerToken(digest: string, at: Date | number): BearerToken | null | Promise<BearerToken | null> {
  const atMs = typeof at === "number" ? at : at.getTime();
  const d = connectedDriver();
  if (d?.kind === "sqlite") return sqliteBearerToken(d, digest, atMs);
  const hit = d?.tokenCache?.get(digest, atMs);
  if (hit !== undefined) {
    tokenCacheHits.count++;
    return hit;
  }
  return bearerTokenLater(digest, atMs);
}

function sqliteBearerToken(d: SqliteDriver, digest: string, atMs: number): BearerToken | null {
  const reader = d.reader();
  const snapshot = currentSnapshot(reader);
  const tokens = snapshot.tokens;
  const cached = tokens.get(digest);
  if (cached && cached.expiresAtMs > atMs) {
    tokenCacheHits.count++;
    return cached.token;
  }
  if (!reader.inTransaction) snapshot.begin.run(); // the first miss of the run opens its read transaction
  const row = statements(reader).bearer.get(digest, sqliteTimeMs(atMs)) as [number, number, string, string, string, number, string | null, string, string] | undefined;
  if (!row) return null;
  const token: BearerToken = Object.freeze({ userId: row[0], clientId: row[1], scopes: row[2], userName: row[3], userEmail: row[4], firstParty: row[5] === 1, jkt: row[6], audience: row[8] });
  const size = env().tokenCacheSize;
  if (size > 0) {
    if (tokens.size >= size) tokens.delete(tokens.keys().next().value!);
    tokens.set(digest, { token, expiresAtMs: Date.parse(row[7]) });
  }
  return token;
}

/** bearerToken() once the driver is connected: the PostgreSQL lookup, or SQLite after its first connection. */
async function bearerTokenLater(digest: string, atMs: number): Promise<BearerToken | null> {
  const known = connectedDriver();
  const generation = known?.kind === "postgresql" ? known.tokenCache?.generation : undefined; // before the lookup
  const d = known ?? (await driver());
  if (d.kind === "sqlite") return sqliteBearerToken(d, digest, atMs);
  const row = await pgLookup<BearerToken & { digest: string; expiresAt: Date }>(d.pool, "bearer", "digest", digest);
  if (!row || row.expiresAt.getTime() <= atMs) return null;
  const { userId, clientId, scopes, userName, userEmail, firstParty, jkt, audience } = row;
  const token: BearerToken = Object.freeze({ userId, clientId, scopes, userName, userEmail, firstParty, jkt, audience });
  if (generation !== undefined) d.tokenCache?.put(digest, token, row.expiresAt.getTime(), generation);
  return token;
}

/** An access or refresh token by digest, live or not, looking first where `hint` says (RFC 7009 2.1). */
export async function tokenByValue(digest: string, hint: string | undefined): Promise<TokenByValue | null> {
  const d = await driver();
  type Raw = Omit<TokenByValue, "user"> & { userId: number; userEmail: string };
  let raw: Raw | undefined;
  if (d.kind === "postgresql") {
    [raw] = await pgQuery<Raw>(d.pool, "byValue", [digest, hint ?? "access_token"]);
  } else {
    const row = (await sqliteRead(d, (s) => s.byValue.get(digest, digest, hint ?? "access_token"))) as Record<string, unknown> | undefined;
    raw = row && {
      ...(row as Raw),
      createdAt: sqliteDate(row.createdAt as string)!,
      expiresAt: sqliteDate(row.expiresAt as string)!,
      revokedAt: sqliteDate(row.revokedAt as string | null),
      usedAt: sqliteDate(row.usedAt as string | null),
    };
  }
  if (!raw) return null;
  const { userId, userEmail, ...token } = raw;
  return { ...token, user: { id: userId, email: userEmail } };
}

type Conversions = Array<[column: string, to: "boolean" | "date"]>;
const conversions = new WeakMap<BetterSqlite3.Statement, Conversions>();

/** A row as Prisma returns it: SQLite's BOOLEAN columns as booleans, DATETIME columns as Dates. */
function typedSqliteRow(statement: BetterSqlite3.Statement, row: Record<string, unknown>): Record<string, unknown> {
  let convert = conversions.get(statement);
  if (!convert) {
    convert = [];
    for (const column of statement.columns()) {
      const type = column.type?.toUpperCase();
      if (type === "BOOLEAN") convert.push([column.name, "boolean"]);
      else if (type === "DATETIME") convert.push([column.name, "date"]);
    }
    conversions.set(statement, convert);
  }
  for (const [column, to] of convert) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    row[column] = to === "boolean" ? value === 1 : new Date(value as string);
  }
  return row;
}

const KEY_COLUMNS = { client: "clientId", userByEmail: "email", codeByDigest: "digest", deviceByDigest: "deviceCodeDigest" } as const;

/** A row by the first statement of `name`, typed as Prisma types it; null when there is none. */
async function typedRow<T>(name: keyof typeof KEY_COLUMNS, key: string): Promise<T | null> {
  const d = await driver();
  if (d.kind === "postgresql") return (await pgLookup(d.pool, name, KEY_COLUMNS[name], key)) as T | null;
  const row = (await sqliteRead(d, (s) => s[name].get(key))) as Record<string, unknown> | undefined;
  return row ? (typedSqliteRow(statements(d.connection)[name], row) as T) : null;
}

/** The user with this (lower-case) e-mail, or null. */
export function userByEmail(email: string): Promise<User | null> {
  return typedRow<User>("userByEmail", email);
}

/**
 * The registered client with this public client_id, or null. On PostgreSQL a registered client's row comes
 * from the token cache's lease while it holds (src/db/pg-token-cache.ts), a copy for each caller; on SQLite
 * the read is one in-process statement of a few microseconds, with nothing to save.
 */
export async function clientByClientId(clientId: string): Promise<Client | null> {
  const known = connectedDriver();
  const cache = known?.kind === "postgresql" ? known.tokenCache : null;
  if (!cache) return typedRow<Client>("client", clientId);
  const hit = cache.getClient(clientId);
  if (hit !== undefined) {
    clientCacheHits.count++;
    return { ...hit };
  }
  const generation = cache.generation; // before the lookup
  const row = await typedRow<Client>("client", clientId);
  if (row) cache.putClient(row, generation);
  return row;
}

/** The authorization code with this digest, used or not, or null (RFC 6749 4.1.3). */
export function authorizationCodeByDigest(digest: string): Promise<AuthorizationCode | null> {
  return typedRow<AuthorizationCode>("codeByDigest", digest);
}

/** The device authorization with this device code digest, or null (RFC 8628 3.4). */
export function deviceAuthorizationByDigest(digest: string): Promise<DeviceAuthorization | null> {
  return typedRow<DeviceAuthorization>("deviceByDigest", digest);
}

/** One limited attempt's keys, each with its limit (src/limits/limiter.ts). */
export type SlotRequest = { key: string; max: number; windowMs: number };

/**
 * Takes one slot on every key at `at`, or none: the new attempts' ids, or (when a key is full) the
 * milliseconds until the oldest attempt it counts leaves its window, the longest over the full keys. One
 * statement on PostgreSQL (the function limiter_reserve: per-key advisory locks, then count, then insert);
 * on SQLite one BEGIN IMMEDIATE transaction, which holds the write lock from the count to the insert.
 */
export async function reserveSlots(slots: readonly SlotRequest[], at: Date): Promise<{ ids: number[] } | { waitMs: number }> {
  const d = await driver();
  if (d.kind === "postgresql") {
    const [row] = await pgQuery<{ ids: number[] | null; wait_ms: string | null }>(d.pool, "reserveSlots", [
      slots.map((slot) => slot.key), slots.map((slot) => slot.max), slots.map((slot) => slot.windowMs), pgTime(at),
    ]);
    return row!.wait_ms !== null ? { waitMs: Number(row!.wait_ms) } : { ids: row!.ids ?? [] };
  }
  const s = statements(d.connection);
  const reserve = d.connection.transaction((): { ids: number[] } | { waitMs: number } => {
    let waitMs: number | null = null;
    for (const slot of slots) {
      const full = s.fullAt.get(slot.key, sqliteTime(new Date(at.getTime() - slot.windowMs)), slot.max - 1) as { createdAt: string } | undefined;
      if (full) waitMs = Math.max(waitMs ?? 0, new Date(full.createdAt).getTime() + slot.windowMs - at.getTime());
    }
    if (waitMs !== null) return { waitMs };
    const createdAt = sqliteTime(at);
    return { ids: slots.map((slot) => Number(s.insertAttempt.run(slot.key, createdAt).lastInsertRowid)) };
  });
  return d.exclusive(() => reserve.immediate());
}

/** The columns of a user that the password grant needs (RFC 6749 4.3.2): who it is, and the hash to check. */
export type PasswordUser = Pick<User, "id" | "passwordHash">;

/**
 * reserveSlots(), and the user with this (lower-case) e-mail or null, read whether the slots were taken or
 * not. PostgreSQL: one statement (the reservation's, joined with the user's row, read as of the statement's
 * start). SQLite: the read on the reader connection as userByEmail() does (in-process: no round trip), then the
 * reservation's transaction.
 */
export async function reserveSlotsWithUser(
  slots: readonly SlotRequest[],
  at: Date,
  email: string,
): Promise<({ ids: number[] } | { waitMs: number }) & { user: PasswordUser | null }> {
  const d = await driver();
  if (d.kind === "postgresql") {
    const [row] = await pgQuery<{ ids: number[] | null; wait_ms: string | null; id: number | null; passwordHash: string | null }>(d.pool, "reserveSlotsWithUser", [
      slots.map((slot) => slot.key), slots.map((slot) => slot.max), slots.map((slot) => slot.windowMs), pgTime(at), email,
    ]);
    const user = row!.id === null ? null : { id: row!.id, passwordHash: row!.passwordHash! };
    return row!.wait_ms !== null ? { waitMs: Number(row!.wait_ms), user } : { ids: row!.ids ?? [], user };
  }
  // Read first: should the read fail, no slot has been taken.
  const found = await userByEmail(email);
  return { ...(await reserveSlots(slots, at)), user: found && { id: found.id, passwordHash: found.passwordHash } };
}

/** Gives slots back: deletes the attempts reserveSlots() inserted. */
export async function releaseSlots(ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const d = await driver();
  if (d.kind === "postgresql") {
    await pgQuery(d.pool, "releaseSlots", [[...ids]]);
    return;
  }
  const s = statements(d.connection);
  const release = d.connection.transaction(() => {
    for (const id of ids) s.deleteAttempt.run(id);
  });
  await d.exclusive(() => release.immediate());
}

/**
 * Starts a grant and inserts its first tokens and its audit event together; resolves with the grant's id, or
 * null (and writes nothing else) when the user's address is not confirmed. The limiter attempts it is given
 * are deleted in the same commit either way.
 */
export async function startGrant(start: NewGrant): Promise<number | null> {
  const d = await driver();
  const { grant, access, refresh, audit } = start;
  if (d.kind === "postgresql") {
    const [row] = await pgQuery<{ id: number }>(d.pool, "startGrant", [
      grant.clientId, grant.userId, grant.grantType, grant.scopes, pgTime(grant.createdAt),
      access.digest, access.scopes, pgTime(access.expiresAt),
      refresh?.digest ?? null, refresh?.scopes ?? null, refresh ? pgTime(refresh.expiresAt) : null,
      audit?.type ?? null, audit?.clientId ?? null, audit?.ip ?? null, audit?.detail ?? null,
      access.jkt, refresh?.jkt ?? null, access.audience, [...(start.releaseAttempts ?? [])],
    ]);
    return row?.id ?? null;
  }
  return groupedWrite(d, (s) => {
    for (const id of start.releaseAttempts ?? []) s.deleteAttempt.run(id);
    if (s.userConfirmed.get(grant.userId) === undefined) return null;
    return insertGrantWithTokens(s, start);
  });
}

/** Inserts the grant, its tokens and its event (inside a grouped write); the grant's id. */
function insertGrantWithTokens(s: Statements, { grant, access, refresh, audit }: NewGrant): number {
  const at = sqliteTime(grant.createdAt);
  const authTime = grant.authTime ? sqliteTime(grant.authTime) : null;
  const grantId = Number(s.insertGrant.run(grant.clientId, grant.userId, grant.grantType, grant.scopes, at, at, authTime).lastInsertRowid);
  s.insertAccess.run(...tokenRowArgs({ ...access, grantId }));
  if (refresh) s.insertRefresh.run(...tokenRowArgs({ ...refresh, grantId }));
  if (audit) s.insertAudit.run(audit.type, sqliteTime(audit.at), audit.userId, audit.clientId, audit.ip, audit.detail);
  return grantId;
}

/** Why a claim issued nothing: the code was claimed first (or its grant revoked), or the address is unconfirmed. */
export type NotIssued = "lost" | "unconfirmed";

/** Thrown inside a grouped write to undo its savepoint, with the reason to answer. */
class Undo extends Error {
  constructor(readonly reason: NotIssued) {
    super(reason);
  }
}

async function undone<T>(write: Promise<T>): Promise<T | NotIssued> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof Undo) return error.reason;
    throw error;
  }
}

/** A code exchange: the code and its grant (read before), and the tokens and event to write with the claim. */
export type CodeExchange = { codeId: number; grantId: number; userId: number; at: Date; access: NewTokenRow; refresh: NewTokenRow; audit: AuditRow | null };

/**
 * Claims an authorization code and issues its grant's tokens with the token.issued event, in one commit:
 * "issued"; or, having written nothing, "lost" (the code was claimed first, or its grant revoked meanwhile)
 * or "unconfirmed" (the user's address is not confirmed: the code is not spent).
 */
export async function exchangeCode(exchange: CodeExchange): Promise<"issued" | NotIssued> {
  const d = await driver();
  const { access, refresh, audit } = exchange;
  if (d.kind === "postgresql") {
    const [row] = await pgQuery<{ claimed: number; confirmed: boolean }>(d.pool, "exchangeCode", [
      pgTime(exchange.at), exchange.codeId, exchange.grantId, exchange.userId, access.clientId,
      access.digest, access.scopes, pgTime(access.expiresAt),
      refresh.digest, refresh.scopes, pgTime(refresh.expiresAt),
      access.jkt, refresh.jkt, access.audience,
      audit?.type ?? null, audit?.clientId ?? null, audit?.ip ?? null, audit?.detail ?? null,
    ]);
    return row!.claimed === 1 ? "issued" : row!.confirmed ? "lost" : "unconfirmed";
  }
  return undone(
    groupedWrite(d, (s): "issued" => {
      if (s.userConfirmed.get(exchange.userId) === undefined) throw new Undo("unconfirmed");
      const at = sqliteTime(exchange.at);
      if (s.claimCode.run(at, exchange.codeId).changes !== 1) throw new Undo("lost");
      if (s.touchGrant.run(at, exchange.grantId).changes !== 1) throw new Undo("lost"); // undoes the claim
      s.insertAccess.run(...tokenRowArgs(access));
      s.insertRefresh.run(...tokenRowArgs(refresh));
      if (audit) s.insertAudit.run(audit.type, sqliteTime(audit.at), audit.userId, audit.clientId, audit.ip, audit.detail);
      return "issued";
    }),
  );
}

/**
 * Claims an approved device code and starts its grant (with the sign-in time), tokens and event, in one
 * commit: the new grant's id; or, having written nothing, "lost" (claimed first) or "unconfirmed".
 */
export async function issueForDeviceCode(deviceId: number, start: NewGrant): Promise<number | NotIssued> {
  const d = await driver();
  const { grant, access, refresh, audit } = start;
  if (d.kind === "postgresql") {
    const [row] = await pgQuery<{ grantId: number | null; confirmed: boolean }>(d.pool, "issueForDeviceCode", [
      pgTime(grant.createdAt), deviceId, grant.clientId, grant.userId, grant.grantType, grant.scopes, grant.authTime ? pgTime(grant.authTime) : null,
      access.digest, access.scopes, pgTime(access.expiresAt),
      refresh?.digest ?? null, refresh?.scopes ?? null, refresh ? pgTime(refresh.expiresAt) : null,
      access.jkt, refresh?.jkt ?? null, access.audience,
      audit?.type ?? null, audit?.clientId ?? null, audit?.ip ?? null, audit?.detail ?? null,
    ]);
    return row!.grantId ?? (row!.confirmed ? "lost" : "unconfirmed");
  }
  return undone(
    groupedWrite(d, (s) => {
      if (s.userConfirmed.get(grant.userId) === undefined) throw new Undo("unconfirmed");
      if (s.claimDevice.run(sqliteTime(grant.createdAt), deviceId, grant.userId).changes !== 1) throw new Undo("lost");
      return insertGrantWithTokens(s, start);
    }),
  );
}

/** A rotation whose rules are the token's own state (no scope narrowing), with the new pair's values. */
export type RotationAtOnce = {
  digest: string;
  clientId: number;
  at: Date;
  accessDigest: string;
  accessExpiresAt: Date;
  refreshDigest: string;
  refreshExpiresAt: Date;
  /** The DPoP key of this request's proof (RFC 9449 5), or null: the new access token is bound to it, and a
   * refresh token bound to a key is claimed only with a proof of that key. */
  jkt: string | null;
  /** The new refresh token's binding when the presented one has none (a public client's proof key). */
  refreshJkt: string | null;
  /** The token.refreshed event: its user and detail ({"scope"}) come from the claimed token. */
  audit: { type: string; clientId: string | null; ip: string | null } | null;
};

/**
 * PostgreSQL only: the whole rotation in one statement (rotateAtOnce above). Resolves with the claimed
 * token's user and scopes, or null when nothing was claimed, or on SQLite, where rotateRefreshToken's one
 * transaction makes no round trips anyway: then the caller goes through rotateRefreshToken.
 */
export async function rotateAtOnce(rotation: RotationAtOnce): Promise<{ userId: number; scopes: string; audience: string } | null> {
  const d = await driver();
  if (d.kind !== "postgresql") return null;
  const { audit } = rotation;
  const [claimed] = await pgQuery<{ userId: number; scopes: string; audience: string }>(d.pool, "rotateAtOnce", [
    rotation.digest, rotation.clientId, pgTime(rotation.at),
    rotation.accessDigest, pgTime(rotation.accessExpiresAt), rotation.refreshDigest, pgTime(rotation.refreshExpiresAt),
    audit?.type ?? null, audit?.clientId ?? null, audit?.ip ?? null, rotation.jkt, rotation.refreshJkt,
  ]);
  return claimed ?? null;
}

/**
 * Rotates a refresh token: reads it by digest, lets `decide` apply the grant's rules (it throws to refuse,
 * and nothing is written), then claims it and inserts the new tokens (and the audit event) together.
 * Throws LostRotation when the claim was lost to a concurrent use or revocation.
 */
export async function rotateRefreshToken(digest: string, decide: (row: RefreshTokenRow | null) => RotationPlan): Promise<void> {
  const d = await driver();
  return d.kind === "postgresql" ? pgRotate(d.pool, digest, decide) : sqliteRotate(d, digest, decide);
}

/**
 * Records a DPoP proof's key (the digest of its thumbprint and jti) until `expiresAt`; false when some
 * instance recorded it before: a replay (RFC 9449 11.1). One statement; the unique key decides.
 */
export async function rememberDpopProof(key: string, expiresAt: Date): Promise<boolean> {
  const d = await driver();
  if (d.kind === "postgresql") return (await pgQuery(d.pool, "rememberDpop", [key, pgTime(expiresAt)])).length === 1;
  const s = statements(d.connection);
  return (await d.exclusive(() => s.rememberDpop.run(key, sqliteTime(expiresAt)))).changes === 1;
}

/**
 * Records a client assertion's key (the digest of its client_id and jti) until `expiresAt`; false when some
 * instance recorded it before: a replay (RFC 7523 3 item 7). One statement; the unique key decides.
 */
export async function rememberClientAssertion(key: string, expiresAt: Date): Promise<boolean> {
  const d = await driver();
  if (d.kind === "postgresql") return (await pgQuery(d.pool, "rememberAssertion", [key, pgTime(expiresAt)])).length === 1;
  const s = statements(d.connection);
  return (await d.exclusive(() => s.rememberAssertion.run(key, sqliteTime(expiresAt)))).changes === 1;
}
