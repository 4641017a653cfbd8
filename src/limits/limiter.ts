// Rate limits (docs/rules/accounts.md#limits): every limit is taken before the work it protects, in one atomic
// step, so that a burst of N requests sent at once passes at most the limit, whatever N, on SQLite and
// PostgreSQL, with WORKERS and across server instances (the counts live in the database).
//
// A limit is a sliding window per key: at most `max` attempts in the last `windowMs`. reserve() takes one
// slot on each of its keys, or none: in one atomic step it counts each key's attempts in its window and, when
// every key has room, inserts an attempt row for each; when any key already holds `max`, nothing is counted and the
// caller gets 429 `rate_limited` with Retry-After saying when the oldest counted attempt leaves that key's
// window. Two reservations on one key never both pass:
//   - PostgreSQL: one statement (the function limiter_reserve, src/db/fast-sql.ts) first takes a
//     transaction-scoped advisory lock per key (keys in one order, so that two reservations never wait on each
//     other crosswise), and counts only once it holds them, with a snapshot taken after the previous holder
//     committed (each statement of a volatile function sees every commit made before it started).
//   - SQLite: one BEGIN IMMEDIATE transaction, which holds the database's write lock (across processes too)
//     from the count to the insert; inside a caller's transaction the insert comes first, which takes it.
//
// Limits that count only some outcomes give the slot back: a limit on failures (wrong passwords, wrong device
// codes, refused permission requests) reserves before the password hash or the guess and releases the slot
// when the attempt succeeds; every limit releases it when the work throws before deciding (the password
// hashing pool is full, the database failed), so that only decided attempts count. A limit on work done
// (registrations, permission requests created) reserves inside the transaction that does the work, so that
// the slot is kept exactly when the work commits.
//
// A limit on failures counts an attempt in flight as one (its outcome is not known yet), so a burst of right
// passwords for one username could be refused only because the others are still hashing. Reservations made
// with { waitForInFlight: true } (the password grant, web sign-in) therefore wait, when refused, while this
// process has attempts on the same key in flight, and try again as those are decided: a released slot (a
// right password) lets the next one in; once none is in flight, a refusal stands (429). So the limit stays
// exact (at most `max` attempts hashed at once) and a burst of right passwords is served in turns. The wait
// is in-process (another instance's attempts in flight are not seen: there a refusal stands at once) and
// bounded (IN_FLIGHT_WAIT_MS). A waiting reservation asks the database again only when it could pass: while
// this process's attempts in flight on a key, plus its reservations being asked for that key right now, reach
// the key's `max`, the statement would be refused (those attempts' rows are in the window), so it waits
// without asking. A burst of N right passwords for one username then costs about N statements, not one for
// every waiter each time an attempt is decided (25 at once with room for 10: 25 statements, was 145).
//
// reserveWithUser() is reserve() bringing back, with the reservation or its refusal, the user of an e-mail:
// read in the reservation's own statement on PostgreSQL (the password grant's two reads before its hash cost
// one round trip), in-process on SQLite. The limiter only passes the e-mail on; the caller decides what the
// user means.
//
// Caps on live rows (unexpired device authorizations and pushed requests per client) take the same per-key
// lock, insert, then count the live rows: lockKeysInTx() and assertUnderCapInTx().
import { nowMs } from "@/clock";
import { env } from "@/env";
import { ApiError, tooManyRequests } from "@/http/errors";
import { db, type Tx } from "@/db/client";
import { releaseSlots, reserveSlots, reserveSlotsWithUser, type PasswordUser, type SlotRequest } from "@/db/fast-sql";

export type Limit = { max: number; windowMs: number };
/** One key and the limit it is held to. */
export type Slot = { key: string; limit: Limit };

/** The slots one attempt took: released when the attempt is not one the limit counts. */
export type Reservation = {
  readonly ids: readonly number[];
  /** Keeps the slots (the attempt counts: a wrong password); ends its time in flight. */
  keep(): void;
  /** Ends its time in flight once the transaction that released the slots (releaseInTx) has committed. */
  releasedInTx(): void;
  /** Gives the slots back (one statement of its own). */
  release(): Promise<void>;
  /** Gives the slots back inside the caller's transaction (with the work that decided the outcome); with
   * waitForInFlight, call releasedInTx() once it has committed. */
  releaseInTx(tx: Tx): Promise<void>;
};

/** The lock class of the limiter's advisory locks, as in limiter_reserve (the second key is the key's hash). */
const LOCK_CLASS = 727272;

// Locks each distinct key's hash in ascending order. The inner DISTINCT keeps the sorted subquery from being
// merged into the outer one, so the locks are taken row by row in that order; count(*) gives Prisma a plain
// integer to read (pg_advisory_xact_lock returns void).
const LOCK_SQL = `SELECT count(*)::int AS "locked" FROM (
    SELECT pg_advisory_xact_lock(${LOCK_CLASS}, "h") FROM (SELECT DISTINCT hashtext("k") AS "h" FROM unnest($1::text[]) AS "k" ORDER BY "h") AS "sorted"
  ) AS "held"`;

/** Serialises the caller's transaction with every other one that locks any of `keys`, until it ends. */
export async function lockKeysInTx(tx: Tx, keys: readonly string[]): Promise<void> {
  // SQLite: the caller's first statement is a write, which already serialises the transaction with every writer.
  if (env().database.kind !== "postgresql" || keys.length === 0) return;
  await tx.$queryRawUnsafe(LOCK_SQL, [...keys]);
}

/** Test hook (src/limits/*.test.ts): awaited by every reserve() before it starts, so that a test can hold a
 * burst at the limiter and see it overlap there. Unset in production: one property read. */
export const limiterHooks: {
  beforeReserve?: (keys: readonly string[]) => Promise<void>;
  /** Called each time reserve() asks the database (its counting statement). */
  onStatement?: (keys: readonly string[]) => void;
} = {};

// Attempts in flight in this process, per key, and the reservations waiting for them to be decided. On
// globalThis: the custom server loads this module twice (its own copy, and Next's bundle's for sign-in).
// `asking` counts, per key, the reservations with waitForInFlight whose statement is running now.
// A waiter is `held` when it waits without having asked (heldHere()), rather than after a refusal.
type InFlight = { counts: Map<string, number>; asking: Map<string, number>; waiters: Set<{ keys: readonly string[]; held: boolean; wake: () => void }>; decided: number };
const inFlightHolder = globalThis as typeof globalThis & { __limiterInFlight?: InFlight };
const inFlight = (inFlightHolder.__limiterInFlight ??= { counts: new Map(), asking: new Map(), waiters: new Set(), decided: 0 });

/** How long a refused reservation waits, at most, for the attempts in flight on its keys. */
export const IN_FLIGHT_WAIT_MS = 5_000;

const bump = (map: Map<string, number>, keys: readonly string[], by: 1 | -1) => {
  for (const key of keys) {
    const next = (map.get(key) ?? 0) + by;
    if (next > 0) map.set(key, next);
    else map.delete(key);
  }
};

/** Whether this process alone already fills one of the slots' keys: its attempts in flight plus those being asked for. */
const heldHere = (slots: readonly Slot[]) =>
  slots.some(({ key, limit }) => (inFlight.counts.get(key) ?? 0) + (inFlight.asking.get(key) ?? 0) >= limit.max);

/** Wakes the waiters on one of `keys` that wait without having asked (to look again at what is held here).
 * Not the refused ones: two of those would wake each other, each asking again, for as long as they wait. */
function wakeHeldWaiters(keys: readonly string[]): void {
  for (const waiter of inFlight.waiters) if (waiter.held && waiter.keys.some((key) => keys.includes(key))) waiter.wake();
}

function settled(keys: readonly string[], released: boolean): void {
  inFlight.decided++;
  for (const key of keys) {
    const left = (inFlight.counts.get(key) ?? 1) - 1;
    if (left > 0) inFlight.counts.set(key, left);
    else inFlight.counts.delete(key);
  }
  // A released slot may let a waiter in; a kept one only matters once nothing is left in flight.
  for (const waiter of inFlight.waiters)
    if (waiter.keys.some((key) => keys.includes(key) && (released || !inFlight.counts.has(key)))) waiter.wake();
}

function reservationOf(ids: number[], trackedKeys: readonly string[] | null = null): Reservation {
  if (trackedKeys) for (const key of trackedKeys) inFlight.counts.set(key, (inFlight.counts.get(key) ?? 0) + 1);
  let open = trackedKeys !== null;
  const settle = (released: boolean) => {
    if (!open) return;
    open = false;
    settled(trackedKeys!, released);
  };
  return {
    ids,
    keep: () => settle(false),
    releasedInTx: () => settle(true),
    release: async () => {
      try {
        await releaseSlots(ids);
      } finally {
        settle(true);
      }
    },
    releaseInTx: async (tx: Tx) => {
      if (ids.length > 0) await tx.failedAttempt.deleteMany({ where: { id: { in: ids } } });
    },
  };
}

/** Resolves once an attempt in flight on one of `keys` is decided in a way that may matter, or after `ms`. */
function inFlightDecided(keys: readonly string[], ms: number, held = false): Promise<void> {
  return new Promise((resolve) => {
    const waiter = {
      keys,
      held,
      wake: () => {
        clearTimeout(timer);
        inFlight.waiters.delete(waiter);
        resolve();
      },
    };
    const timer = setTimeout(waiter.wake, ms);
    inFlight.waiters.add(waiter);
  });
}

const refused = (waitMs: number) => tooManyRequests(Math.max(1, waitMs / 1000));
const requests = (slots: readonly Slot[]): SlotRequest[] => slots.map(({ key, limit }) => ({ key, max: limit.max, windowMs: limit.windowMs }));

/**
 * Takes one slot on every key, or throws 429 rate_limited (Retry-After) and takes none: one atomic step of its
 * own. With `waitForInFlight`, a refusal first waits for this process's attempts in flight on the same keys
 * (see above); the reservation must then be ended by keep(), release() or releaseInTx().
 */
export async function reserve(slots: readonly Slot[], options: { waitForInFlight?: boolean } = {}): Promise<Reservation> {
  const taken = await take(slots, options, null);
  if ("refusal" in taken) throw taken.refusal;
  return taken.reservation;
}

/** A reservation made with reserveWithUser(): taken, or refused (429 rate_limited), with the user read with it. */
export type ReservationWithUser = { user: PasswordUser | null } & ({ reservation: Reservation } | { refusal: ApiError });

/**
 * reserve(), and the user with this (lower-case) e-mail or null, read with the reservation (on PostgreSQL in
 * its one statement: the password grant's two reads before its hash in one round trip). A refusal is returned
 * rather than thrown, with the user, so that the caller can name them when it records it. With
 * `waitForInFlight`, the user is the one read by the reservation's last statement (the one that passed, or
 * the final refusal).
 */
export function reserveWithUser(slots: readonly Slot[], email: string, options: { waitForInFlight?: boolean } = {}): Promise<ReservationWithUser> {
  return take(slots, options, email);
}

async function take(slots: readonly Slot[], options: { waitForInFlight?: boolean }, email: string | null): Promise<ReservationWithUser> {
  const keys = slots.map((slot) => slot.key);
  await limiterHooks.beforeReserve?.(keys);
  const deadline = nowMs() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    const decidedBefore = inFlight.decided;
    // Filled by this process's own attempts (or about to be): the statement could only refuse. Wait for one of
    // them to be decided, or for an asking reservation to be refused (before the deadline: after it, ask, for
    // the refusal's Retry-After).
    if (options.waitForInFlight && heldHere(slots) && nowMs() < deadline) {
      await inFlightDecided(keys, deadline - nowMs(), true);
      continue;
    }
    limiterHooks.onStatement?.(keys);
    if (options.waitForInFlight) bump(inFlight.asking, keys, 1);
    let outcome: ({ ids: number[] } | { waitMs: number }) & { user?: PasswordUser | null } | undefined;
    try {
      // One statement on PostgreSQL, one BEGIN IMMEDIATE transaction on SQLite (src/db/fast-sql.ts); with an
      // e-mail, the user's row in the same statement (on SQLite, read after it, in-process).
      outcome = email === null ? await reserveSlots(requests(slots), new Date(nowMs())) : await reserveSlotsWithUser(requests(slots), new Date(nowMs()), email);
    } finally {
      if (options.waitForInFlight) {
        bump(inFlight.asking, keys, -1);
        // Refused (or failed): the slots it asked for are not taken after all; those waiting behind it may ask.
        if (!outcome || "waitMs" in outcome) wakeHeldWaiters(keys);
      }
    }
    const user = outcome.user ?? null;
    if (!("waitMs" in outcome)) return { user, reservation: reservationOf(outcome.ids, options.waitForInFlight ? keys : null) };
    const left = deadline - nowMs();
    if (!options.waitForInFlight || left <= 0) return { user, refusal: refused(outcome.waitMs) };
    // An attempt decided while the statement ran may have freed the slot it was refused for: try again at once.
    if (inFlight.decided !== decidedBefore) continue;
    if (!keys.some((key) => inFlight.counts.has(key))) return { user, refusal: refused(outcome.waitMs) };
    await inFlightDecided(keys, left);
  }
}

/**
 * Takes one slot on every key inside the caller's transaction, or throws 429 rate_limited (Retry-After) and
 * takes none. On SQLite this must be the transaction's first statement; on PostgreSQL the keys stay locked
 * until the transaction ends, so call it where the work it protects begins.
 */
export async function reserveInTx(tx: Tx, slots: readonly Slot[]): Promise<Reservation> {
  const at = nowMs();
  if (env().database.kind === "postgresql") {
    // The same function as reserve()'s statement; its advisory locks last until the caller's transaction ends.
    const [row] = await tx.$queryRawUnsafe<Array<{ ids: number[] | null; wait_ms: bigint | number | null }>>(
      `SELECT "ids", "wait_ms" FROM "limiter_reserve"($1::text[], $2::int[], $3::bigint[], $4::timestamp(3))`,
      slots.map((slot) => slot.key),
      slots.map((slot) => slot.limit.max),
      slots.map((slot) => slot.limit.windowMs),
      new Date(at).toISOString(),
    );
    if (row!.wait_ms !== null) throw refused(Number(row!.wait_ms));
    return reservationOf((row!.ids ?? []).map(Number));
  }
  // SQLite: insert first (the write lock, held to the end of the transaction), then count the others.
  const createdAt = new Date(at);
  const ids: number[] = [];
  for (const slot of slots) ids.push((await tx.failedAttempt.create({ data: { key: slot.key, createdAt }, select: { id: true } })).id);
  let waitMs: number | null = null;
  for (const { key, limit } of slots) {
    const full = await tx.failedAttempt.findFirst({
      where: { key, createdAt: { gt: new Date(at - limit.windowMs) }, id: { notIn: ids } },
      orderBy: { createdAt: "desc" },
      skip: limit.max - 1,
      select: { createdAt: true },
    });
    // Full: the key has room again when the oldest of its last `max` attempts leaves the window.
    if (full) waitMs = Math.max(waitMs ?? 0, full.createdAt.getTime() + limit.windowMs - at);
  }
  if (waitMs !== null) throw refused(waitMs);
  return reservationOf(ids);
}

/** When `slot`'s key has room again (ms since the epoch), or null when it has room now. One read. */
export async function fullUntil(slot: Slot): Promise<number | null> {
  const at = nowMs();
  const row = await (await db()).failedAttempt.findFirst({
    where: { key: slot.key, createdAt: { gt: new Date(at - slot.limit.windowMs) } },
    orderBy: { createdAt: "desc" },
    skip: slot.limit.max - 1,
    select: { createdAt: true },
  });
  return row ? row.createdAt.getTime() + slot.limit.windowMs : null;
}

/** Whether `error` is the limiter's refusal (or any other 429). */
export function isRateLimited(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status === 429;
}

/**
 * Runs `work` holding the slots; gives them back when `work` throws, or when `counts` says its result is not
 * an attempt the limit counts (a limit on failures: the attempt succeeded).
 */
export async function withReservation<T>(reservation: Reservation, work: () => Promise<T>, counts: (result: T) => boolean = () => true): Promise<T> {
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await reservation.release();
    throw error;
  }
  if (!counts(result)) await reservation.release();
  return result;
}

/**
 * At most `max` live rows under `key`: call inside the transaction that inserts one, right after the insert
 * (SQLite: as its first statement; PostgreSQL: the lock comes first, so call lockKeysInTx() before the insert),
 * with `live` counting the live rows other than the new one and `ends` returning the earliest end among them.
 * Throws 429 rate_limited, Retry-After until that end, and the transaction rolls the insert back.
 */
export async function assertUnderCapInTx(options: { max: number; live: () => Promise<number>; ends: () => Promise<Date | null> }): Promise<void> {
  const live = await options.live();
  if (live < options.max) return;
  const end = await options.ends();
  throw tooManyRequests(end === null ? 1 : Math.max(1, (end.getTime() - nowMs()) / 1000));
}

/**
 * The part of a client address that a per-address limit counts: an IPv4 address whole, an IPv6 address by its
 * /64 (one subscriber's network: a host can choose any address inside it). Anything else as it is.
 */
export function addressKey(address: string): string {
  if (!address.includes(":")) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  return `${groups.slice(0, 4).join(":")}::/64`;
}

/** The eight groups of an IPv6 address (hex, no leading zeros), or null when it is not one. */
function ipv6Groups(address: string): string[] | null {
  let text = address.toLowerCase();
  // An IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is the last two groups.
  const v4 = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const bytes = v4.slice(2).map(Number);
    if (bytes.some((byte) => byte > 255)) return null;
    text = `${v4[1]}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const part = (half: string) => (half === "" ? [] : half.split(":"));
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return null;
  return groups.map((group) => parseInt(group, 16).toString(16));
}
