// Failed password checks (and other counted attempts), per key in a sliding window kept in the database, so
// that a limit holds across server instances (CONTRACT.md 4 and 14). Keys: `password:<client_id>:<email>` at
// the token endpoint (10 in 15 minutes); `signin:<email>:<address>` (10 in 15 minutes) and `signin:<email>`
// (50 in 15 minutes) for the web sign-in. Under a burst of concurrent failures the count can pass the limit by
// the number of requests in flight; each of those still needed a wrong password, and the next one is refused.
import { nowMs } from "@/clock";
import { tooManyRequests } from "@/http/errors";
import { write, type Tx } from "@/server/db";
import { recentFailures } from "@/server/fast-sql";

export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
export const MAX_FAILURES = 10;

export type Limit = { max: number; windowMs: number };
const DEFAULT_LIMIT: Limit = { max: MAX_FAILURES, windowMs: FAILURE_WINDOW_MS };

/** Seconds until `key` is under its limit again, or null while it is under it now. */
export async function limitedFor(key: string, limit: Limit = DEFAULT_LIMIT): Promise<number | null> {
  const at = nowMs();
  // One statement below Prisma (src/server/fast-sql.ts): every password check asks.
  const recent = await recentFailures(key, new Date(at - limit.windowMs), limit.max);
  if (recent.length < limit.max) return null;
  // The limit lifts when the oldest of the last `max` attempts leaves the window.
  const oldest = recent[limit.max - 1]!.getTime();
  return Math.max(1, (oldest + limit.windowMs - at) / 1000);
}

/** Throws 429 rate_limited with Retry-After while `key` has `limit.max` attempts in the window. */
export async function assertNotLimited(key: string, limit: Limit = DEFAULT_LIMIT): Promise<void> {
  const seconds = await limitedFor(key, limit);
  if (seconds !== null) throw tooManyRequests(seconds);
}

/** Counts one attempt against each key, inside the caller's transaction. */
export async function recordFailuresInTx(tx: Tx, keys: string[]): Promise<void> {
  const createdAt = new Date(nowMs());
  for (const key of keys) await tx.failedAttempt.create({ data: { key, createdAt } });
}

export async function recordFailure(key: string): Promise<void> {
  await write((tx) => recordFailuresInTx(tx, [key]));
}
