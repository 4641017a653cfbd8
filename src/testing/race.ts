// Requests that truly overlap, for the tests of single-use rules (of any number of concurrent uses exactly one
// succeeds: docs/rules/tokens.md#authorization-codes, docs/rules/tokens.md#refresh,
// docs/rules/permission-requests.md#redeeming). Firing requests with Promise.all is not enough: whatever a
// handler does before its claim (decoding a session cookie, hashing) can stagger them so that each one runs
// after the previous one has finished, and then a test of the race passes even when the claim is not
// conditional at all.
//
// A Barrier holds every request at the entrance of its handler until all of them have arrived, then lets them
// go at once; a test checks `barrier.arrived` to show that they did overlap. The hold is in what the handler
// itself waits for first, through its public interface, with no change to the code under test:
//   - heldParams(): the route's `context.params` (every [param] route awaits it before anything else);
//   - heldBody(): the request body, streamed as a slow client would send it (handlers read it first).
// Requests are then authenticated with bearer tokens or client credentials (one indexed read), so that the
// path from the barrier to the claim is short and the same for every request.

/** Releases everyone once `size` callers have arrived. */
export class Barrier {
  #arrived = 0;
  #open!: () => void;
  readonly opened: Promise<void>;

  constructor(readonly size: number) {
    this.opened = new Promise<void>((resolve) => (this.#open = resolve));
  }

  /** How many have arrived so far. */
  get arrived(): number {
    return this.#arrived;
  }

  arrive(): Promise<void> {
    this.#arrived++;
    if (this.#arrived === this.size) this.#open();
    return this.opened;
  }
}

/** A route context whose params resolve only when every request sharing `barrier` has awaited them. */
export function heldParams(barrier: Barrier, params: Record<string, string>) {
  const thenable = {
    then<R>(resolve: (value: Record<string, string>) => R, reject?: (error: unknown) => R) {
      return barrier.arrive().then(() => resolve(params), reject);
    },
  };
  return { params: thenable as unknown as Promise<Record<string, string>> };
}

/** A request body that a handler can read only when every request sharing `barrier` has started reading. */
export function heldBody(barrier: Barrier, text: string): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (sent) return;
        sent = true;
        await barrier.arrive();
        controller.enqueue(new TextEncoder().encode(text));
        controller.close();
      },
    },
    // highWaterMark 0: nothing is pulled until the handler reads, so arriving means "the handler started".
    { highWaterMark: 0 },
  );
}

/** Resolves with all results, or fails naming how many requests reached the barrier when some never do. */
export async function together<T>(barrier: Barrier, requests: Promise<T>[], timeoutMs = 20_000): Promise<T[]> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`only ${barrier.arrived} of ${barrier.size} requests reached the barrier`)), timeoutMs);
  });
  try {
    await Promise.race([barrier.opened, stalled]);
    return await Promise.all(requests);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Holds back every claim on one row so that a test can line requests up in a chosen order: each request reads
 * the row, then waits at its claim (the conditional update that opens its transaction); release() lets
 * them claim in the order they arrived. This is how a test makes a request read a row *before* another one
 * commits and claim it *after*: the window in which only a conditional claim keeps a single-use rule.
 *   - PostgreSQL: the test's own transaction locks the row (SELECT ... FOR UPDATE); a claim then waits for the
 *     lock, which PostgreSQL grants first come, first served, and re-checks its WHERE clause on the row as the
 *     winner left it. waitForClaims(n) watches pg_stat_activity until n sessions wait on the test's lock.
 *   - SQLite: a process has one connection, whose transactions queue first come, first served on one lock
 *     (src/db/client.ts); the test takes that lock without opening a transaction. Reads go on (Prisma's and
 *     the hot statements' alike, since no transaction is open), every transaction waits: each request reads
 *     and then waits at its claim. waitForClaims(n) watches the lock's queue until n wait on it, counting
 *     each write of a grouped batch (src/db/fast-sql.ts), which waits as one transaction, as one claim.
 */
export async function holdClaims(table: string, id: number) {
  const { db, driver, write } = await import("@/db/client");
  await db();
  const d = await driver();
  const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 5));
  if (d.kind === "sqlite") {
    const release = await d.hold();
    return {
      /** Resolves once `count` transactions wait for the lock the test holds. */
      async waitForClaims(count: number): Promise<void> {
        const { groupedWritesWaiting } = await import("@/db/fast-sql");
        for (let i = 0; i < 4000; i++) {
          // A batch of grouped writes (src/db/fast-sql.ts) waits for the lock as one transaction: each of its
          // writes is a claim that waits.
          const grouped = groupedWritesWaiting();
          if (d.queued() - grouped.batches + grouped.writes >= count) return;
          await turn();
        }
        throw new Error(`fewer than ${count} requests ever waited at their claim`);
      },
      async release(): Promise<void> {
        release();
      },
    };
  }
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let holding!: (pid: number) => void;
  const held = new Promise<number>((resolve) => (holding = resolve));
  const transaction = write(async (tx) => {
    await tx.$queryRawUnsafe(`SELECT 1 FROM "${table}" WHERE "id" = $1 FOR UPDATE`, id);
    const rows = await tx.$queryRawUnsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid");
    holding(rows[0]!.pid);
    await gate;
  });
  const holder = await held;
  const client = await db();
  return {
    /** Resolves once `count` sessions wait on the row the test's transaction locked. */
    async waitForClaims(count: number): Promise<void> {
      for (let i = 0; i < 4000; i++) {
        const rows = await client.$queryRawUnsafe<{ waiting: number }[]>(
          // Waiting on the test's lock, or (queued behind an earlier waiter) on a session that waits on it.
          `WITH RECURSIVE blocked(pid) AS (
             SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))
             UNION SELECT a.pid FROM pg_stat_activity a JOIN blocked b ON b.pid = ANY(pg_blocking_pids(a.pid))
           ) SELECT count(*)::int AS waiting FROM blocked`,
          holder,
        );
        if (rows[0]!.waiting >= count) return;
        await turn();
      }
      throw new Error(`fewer than ${count} requests ever waited at their claim`);
    },
    async release(): Promise<void> {
      release();
      await transaction;
    },
  };
}
