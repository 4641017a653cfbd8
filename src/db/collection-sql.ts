// The reads of the bundle, bundle permission and permission request collections and records, below Prisma
// (docs/design.md#the-data-layer), beside the hot token statements of src/db/fast-sql.ts. Through Prisma a
// page cost a count and a findMany whose includes are further queries (an empty page answered 24 times fewer
// requests a second than a bearer read, docs/benchmarks.md#collection-reads); here each read is ONE
// statement: the page, its total and the rows it references (bundle, owner, the users named), joined. The
// rules stay in the domain files:
// - who sees which rows (docs/rules/permission-requests.md#bundles, #bundle-permissions,
//   #listing-and-reading): the conditions below are src/bundles/access.ts visibleBundles(),
//   src/bundle-permissions/represent.ts permissionParties() and src/permission-requests/represent.ts
//   requestParties(), in SQL;
// - paging and order (docs/rules/endpoints.md#collections): `limit` and `offset` as src/http/collection.ts
//   read them, newest first (createdAt, then id, both descending), as before;
// - the representation and who sees an e-mail (docs/rules/permission-requests.md#who-sees-an-e-mail-address):
//   this file returns every referenced user's e-mail and the domain's representers decide, as before.
// src/db/collection-sql.int.test.ts compares every read with the Prisma queries it replaced, on a varied
// dataset, on both databases.
//
// A page is one row: its total, and its objects as one JSON array (json_group_array on SQLite, json_agg on
// PostgreSQL; each object an array of its columns with those of what it references, joined), so that an empty
// page, or an offset past the end, still carries the total. SQLite: on the reader connection (src/db/client.ts: query_only, never waits for
// nor sees inside a Prisma transaction; a commit is seen by the next read), synchronously once connected (no
// promise); inside the read transaction of the bearer reads of the same synchronous run when there is one
// (src/db/fast-sql.ts), else on its own. PostgreSQL: named prepared statements on the pool Prisma shares.
import type BetterSqlite3 from "better-sqlite3";
import type pg from "pg";
import { connectedDriver, driver, type Driver } from "@/db/client";
import { pgTypes } from "@/db/fast-sql";

/** A user as a representation needs them (the domain decides whether the e-mail is shown). */
export type UserRow = { id: number; name: string; email: string };
export type BundleRow = { id: number; name: string; createdAt: Date; owner: UserRow };
export type BundlePermissionRow = { id: number; createdAt: Date; bundle: BundleRow; userAllowed: UserRow; userTarget: UserRow };
export type PermissionRequestRow = {
  id: number;
  redeemUrl: string | null;
  ttl: number | null;
  status: string;
  allowedNamedByEmail: boolean;
  createdAt: Date;
  expiresAt: Date;
  redeemedAt: Date | null;
  deletedAt: Date | null;
  requestedById: number;
  userTargetId: number;
  userAllowedId: number;
  bundle: BundleRow;
  userAllowed: UserRow;
  userTarget: UserRow;
  requestedBy: UserRow;
};

/** One page: the total of what the viewer may list, and the rows of the page, in order. */
export type Page<T> = { total: number; rows: T[] };
export type PageWindow = { limit: number; offset: number };

type MaybePromise<T> = T | Promise<T>;

// --- The statements (one text for both databases: @name parameters, $n on PostgreSQL) ---------------------

const user = (alias: string) => `${alias}."id", ${alias}."name", ${alias}."email"`;
const BUNDLE_COLUMNS = `b."id", b."name", b."createdAt", ${user("o")}`; // 6
const BUNDLE_JOIN = `JOIN "User" o ON o."id" = b."ownerId"`;
const PERMISSION_COLUMNS = `p."id", p."createdAt", ${BUNDLE_COLUMNS}, ${user("ua")}, ${user("ut")}`; // 14
const PERMISSION_JOINS = `JOIN "Bundle" b ON b."id" = p."bundleId" ${BUNDLE_JOIN}
  JOIN "User" ua ON ua."id" = p."userAllowedId" JOIN "User" ut ON ut."id" = p."userTargetId"`;
const REQUEST_COLUMNS = `r."id", r."redeemUrl", r."ttl", r."status", r."allowedNamedByEmail", r."createdAt", r."expiresAt", r."redeemedAt", r."deletedAt",
  ${BUNDLE_COLUMNS}, ${user("ua")}, ${user("ut")}, ${user("rb")}`; // 9 + 6 + 9
const REQUEST_JOINS = `JOIN "Bundle" b ON b."id" = r."bundleId" ${BUNDLE_JOIN}
  JOIN "User" ua ON ua."id" = r."userAllowedId" JOIN "User" ut ON ut."id" = r."userTargetId" JOIN "User" rb ON rb."id" = r."requestedById"`;

// Who may see what: the domain's rules (file comment), one SQL condition each.
const VISIBLE_BUNDLE = `(b."ownerId" = @viewer OR EXISTS (SELECT 1 FROM "BundlePermission" vp WHERE vp."bundleId" = b."id" AND vp."userAllowedId" = @viewer))`;
const PERMISSION_PARTY = `(p."userAllowedId" = @viewer OR p."userTargetId" = @viewer)`;
const PERMISSION_ALLOWED = `p."userAllowedId" = @viewer`;
const REQUEST_PARTY = `(r."requestedById" = @viewer OR r."userTargetId" = @viewer OR r."userAllowedId" = @viewer)`;

/**
 * The page of `table` (alias `a`) rows where `visible` holds, newest first, and its total, as one row:
 * [total, page], the page a JSON array of one array of `columns` per object (on SQLite json_group_array's
 * text, on PostgreSQL json_agg's value, null when empty). JSON rather than a row per object: measured on
 * SQLite, half the CPU of the same joins returned as rows (empty page or full), and the total needs no outer
 * join to survive an empty page. The subquery chooses the page's rows in order; the array holds them in no
 * particular order and toPage() sorts them again (an ORDER BY inside the aggregate cost SQLite about as much
 * as the rest of the statement: 100 against 57 µs for a page of 20 requests, as measured).
 */
function pageSql(table: string, a: string, visible: string, columns: string, joins: string): string {
  return `SELECT (SELECT count(*) FROM "${table}" ${a} WHERE ${visible}) AS "total",
    (SELECT json_group_array(json_array(${columns}))
      FROM (SELECT * FROM "${table}" ${a} WHERE ${visible} ORDER BY ${a}."createdAt" DESC, ${a}."id" DESC LIMIT @limit OFFSET @offset) ${a}
      ${joins}) AS "page"`;
}

/** One record by id, where `visible` holds. */
const recordSql = (table: string, a: string, visible: string, columns: string, joins: string) =>
  `SELECT ${columns} FROM "${table}" ${a} ${joins} WHERE ${a}."id" = @id AND ${visible}`;

const SQL = {
  bundlePage: pageSql("Bundle", "b", VISIBLE_BUNDLE, BUNDLE_COLUMNS, BUNDLE_JOIN),
  bundle: recordSql("Bundle", "b", VISIBLE_BUNDLE, BUNDLE_COLUMNS, BUNDLE_JOIN),
  permissionPage: pageSql("BundlePermission", "p", PERMISSION_PARTY, PERMISSION_COLUMNS, PERMISSION_JOINS),
  allowedPermissionPage: pageSql("BundlePermission", "p", PERMISSION_ALLOWED, PERMISSION_COLUMNS, PERMISSION_JOINS),
  permission: recordSql("BundlePermission", "p", PERMISSION_PARTY, PERMISSION_COLUMNS, PERMISSION_JOINS),
  requestPage: pageSql("PermissionRequest", "r", REQUEST_PARTY, REQUEST_COLUMNS, REQUEST_JOINS),
  request: recordSql("PermissionRequest", "r", REQUEST_PARTY, REQUEST_COLUMNS, REQUEST_JOINS),
} as const;
type Name = keyof typeof SQL;

// --- Rows to objects (the columns in the statements' order) -----------------------------------------------

type Cells = readonly unknown[];
/**
 * A DateTime column as Prisma reads it: SQLite holds ISO 8601 text with "+00:00" (src/db/fast-sql.ts
 * sqliteTime()); PostgreSQL's rows are parsed already (below), and its JSON has the UTC wall time without a zone.
 */
const date = (value: unknown): Date => (value instanceof Date ? value : new Date(ZONED.test(value as string) ? (value as string) : `${value as string}Z`));
const ZONED = /(?:Z|[+-]\d\d:\d\d)$/;
const dateOrNull = (value: unknown): Date | null => (value === null ? null : date(value));
const userAt = (c: Cells, i: number): UserRow => ({ id: c[i] as number, name: c[i + 1] as string, email: c[i + 2] as string });
const bundleAt = (c: Cells, i: number): BundleRow => ({ id: c[i] as number, name: c[i + 1] as string, createdAt: date(c[i + 2]), owner: userAt(c, i + 3) });
const permissionAt = (c: Cells, i: number): BundlePermissionRow => ({
  id: c[i] as number,
  createdAt: date(c[i + 1]),
  bundle: bundleAt(c, i + 2),
  userAllowed: userAt(c, i + 8),
  userTarget: userAt(c, i + 11),
});
function requestAt(c: Cells, i: number): PermissionRequestRow {
  const userAllowed = userAt(c, i + 15);
  const userTarget = userAt(c, i + 18);
  const requestedBy = userAt(c, i + 21);
  return {
    id: c[i] as number,
    redeemUrl: c[i + 1] as string | null,
    ttl: c[i + 2] as number | null,
    status: c[i + 3] as string,
    allowedNamedByEmail: c[i + 4] === true || c[i + 4] === 1,
    createdAt: date(c[i + 5]),
    expiresAt: date(c[i + 6]),
    redeemedAt: dateOrNull(c[i + 7]),
    deletedAt: dateOrNull(c[i + 8]),
    requestedById: requestedBy.id,
    userTargetId: userTarget.id,
    userAllowedId: userAllowed.id,
    bundle: bundleAt(c, i + 9),
    userAllowed,
    userTarget,
    requestedBy,
  };
}

/** Newest first: createdAt, then id, both descending (the order of the page's subquery). */
const newestFirst = (x: { id: number; createdAt: Date }, y: { id: number; createdAt: Date }) => y.createdAt.getTime() - x.createdAt.getTime() || y.id - x.id;

function toPage<T extends { id: number; createdAt: Date }>(rows: Cells[], at: (cells: Cells, i: number) => T): Page<T> {
  const [total, page] = rows[0]!; // (PostgreSQL's count is a bigint, read as text)
  const objects = (typeof page === "string" ? JSON.parse(page) : (page ?? [])) as Cells[];
  return { total: Number(total), rows: objects.map((cells) => at(cells, 0)).sort(newestFirst) };
}

// --- SQLite -----------------------------------------------------------------------------------------------

const prepared = new WeakMap<BetterSqlite3.Database, Record<Name, BetterSqlite3.Statement>>();

/** Prepared once per connection; rows as arrays of plain numbers and text. */
function statement(connection: BetterSqlite3.Database, name: Name): BetterSqlite3.Statement {
  let found = prepared.get(connection);
  if (!found) {
    found = Object.fromEntries(Object.entries(SQL).map(([key, sql]) => [key, connection.prepare(sql).safeIntegers(false).raw(true)])) as Record<Name, BetterSqlite3.Statement>;
    prepared.set(connection, found);
  }
  return found[name];
}

// --- PostgreSQL -------------------------------------------------------------------------------------------

// timestamp(3) columns hold UTC wall time (as Prisma writes them): read as UTC whatever the process's time
// zone, with the parsers of src/db/fast-sql.ts.
const PG_PARAMETERS: Record<string, { index: number; type: string }> = { viewer: { index: 1, type: "int" }, limit: { index: 2, type: "bigint" }, offset: { index: 3, type: "bigint" }, id: { index: 2, type: "int" } };
/** @viewer, @limit, @offset -> $1, $2, $3; @viewer, @id -> $1, $2; SQLite's JSON functions -> PostgreSQL's. */
const pgText = (sql: string) =>
  sql
    .replace(/@(\w+)/g, (_, name: string) => `$${PG_PARAMETERS[name]!.index}::${PG_PARAMETERS[name]!.type}`)
    .replace(/json_group_array\(/g, "json_agg(")
    .replace(/json_array\(/g, "json_build_array(");
const PG = Object.fromEntries(Object.entries(SQL).map(([name, sql]) => [name, pgText(sql)])) as Record<Name, string>;

async function pgRows(pool: pg.Pool, name: Name, values: unknown[]): Promise<Cells[]> {
  const query = {
    // Stryker disable next-line StringLiteral: the name only lets PostgreSQL keep the statement prepared; unnamed, it is planned each time, with the same rows
    name: `collection-sql-${name}`,
    text: PG[name], values, rowMode: "array", types: pgTypes,
  } as const;
  return (await pool.query<unknown[]>(query)).rows;
}

// --- The reads --------------------------------------------------------------------------------------------

type Params = { viewer: number; limit?: number; offset?: number; id?: number };

/** Runs a statement: at once on SQLite once connected (no promise), else on the driver when it is ready. */
function rows(name: Name, params: Params): MaybePromise<Cells[]> {
  const d = connectedDriver();
  return d ? rowsOn(d, name, params) : driver().then((ready) => rowsOn(ready, name, params));
}

function rowsOn(d: Driver, name: Name, params: Params): MaybePromise<Cells[]> {
  if (d.kind === "sqlite") return statement(d.reader(), name).all(params) as Cells[];
  const values = params.id === undefined ? [params.viewer, params.limit, params.offset] : [params.viewer, params.id];
  return pgRows(d.pool, name, values);
}

const then = <T, U>(value: MaybePromise<T>, next: (value: T) => U): MaybePromise<U> => (value instanceof Promise ? value.then(next) : next(value));
const pageOf = <T extends { id: number; createdAt: Date }>(name: Name, viewer: number, window: PageWindow, at: (cells: Cells, i: number) => T): MaybePromise<Page<T>> =>
  then(rows(name, { viewer, limit: window.limit, offset: window.offset }), (found) => toPage(found, at));
const recordOf = <T>(name: Name, viewer: number, id: number, at: (cells: Cells, i: number) => T): MaybePromise<T | null> =>
  then(rows(name, { viewer, id }), (found) => (found[0] ? at(found[0], 0) : null));

/** The bundles `viewer` owns or was allowed into, newest first. */
export const bundlePage = (viewer: number, window: PageWindow) => pageOf("bundlePage", viewer, window, bundleAt);
/** Bundle `id` if `viewer` owns it or was allowed into it, else null. */
export const visibleBundle = (viewer: number, id: number) => recordOf("bundle", viewer, id, bundleAt);
/** The bundle permissions where `viewer` is either party (`allowedOnly`: the allowed user), newest first. */
export const bundlePermissionPage = (viewer: number, window: PageWindow, allowedOnly = false) =>
  pageOf(allowedOnly ? "allowedPermissionPage" : "permissionPage", viewer, window, permissionAt);
/** Bundle permission `id` if `viewer` is either party, else null. */
export const visibleBundlePermission = (viewer: number, id: number) => recordOf("permission", viewer, id, permissionAt);
/** The permission requests where `viewer` is requester, target or allowed user, whatever their state, newest first. */
export const permissionRequestPage = (viewer: number, window: PageWindow) => pageOf("requestPage", viewer, window, requestAt);
/** Permission request `id` if `viewer` is one of its three parties, else null. */
export const visiblePermissionRequest = (viewer: number, id: number) => recordOf("request", viewer, id, requestAt);
