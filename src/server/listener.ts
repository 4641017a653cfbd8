// Stopping a listener without resetting connections that were already made (graceful shutdown,
// docs/rules/operations.md#shutdown). Connections the kernel has completed but the process has not yet taken
// from the listen queue are reset when the listening socket closes; and Node takes them over several turns of
// the event loop, about one per turn when the process is busy (seen here: 35-45 ms apart under load), not all
// at once. So the listener closes only once QUIET_TURNS turns and QUIET_MS have passed with nothing accepted
// (or MAX_MS).

export const QUIET_TURNS = 3;
export const QUIET_MS = 50;
export const MAX_MS = 1_000;

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Resolves once `accepted()` (a count of accepted connections) has stopped growing, as above. */
export async function acceptQueueDrained(accepted: () => number): Promise<void> {
  const start = performance.now(); // durations, not rules: not the clock
  let seen = accepted();
  let quietTurns = 0;
  let quietSince = start;
  while (performance.now() - start < MAX_MS) {
    await nextTurn();
    if (accepted() !== seen) {
      seen = accepted();
      quietTurns = 0;
      quietSince = performance.now();
    } else if (++quietTurns >= QUIET_TURNS && performance.now() - quietSince >= QUIET_MS) {
      return;
    } else if (quietTurns >= QUIET_TURNS) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
