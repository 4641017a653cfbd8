// Failed password checks, counted per key (client and e-mail at the token endpoint, e-mail at sign-in) in a
// sliding window kept in the database, so that the limit holds across server instances (CONTRACT.md 4).
// Under a burst of concurrent failures the count can pass the limit by the number of requests in flight;
// each of those still needed a wrong password, and the next one is refused.
import { nowMs } from "@/clock";
import { tooManyRequests } from "@/http/errors";
import { write } from "@/server/db";
import { recentFailures } from "@/server/fast-sql";

export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
export const MAX_FAILURES = 10;

/** Throws 429 rate_limited with Retry-After while `key` has MAX_FAILURES failures in the window. */
export async function assertNotLimited(key: string): Promise<void> {
  const since = new Date(nowMs() - FAILURE_WINDOW_MS);
  const recent = await recentFailures(key, since, MAX_FAILURES); // one statement: every password check asks
  if (recent.length < MAX_FAILURES) return;
  // The limit lifts when the oldest of the last MAX_FAILURES failures leaves the window.
  const oldest = recent[MAX_FAILURES - 1]!.getTime();
  throw tooManyRequests((oldest + FAILURE_WINDOW_MS - nowMs()) / 1000);
}

export async function recordFailure(key: string): Promise<void> {
  const createdAt = new Date(nowMs());
  await write((tx) => tx.failedAttempt.create({ data: { key, createdAt } }));
}
