// Passwords: argon2id with OWASP's parameters (m = 19 MiB, t = 2, p = 1), about 11 ms of one core each.
//
// At most hashingSlots() hashes run at once per process, one per core this process may use (the cores divided
// among the WORKERS), each on a thread of its own (src/users/hashing-threads.ts); the rest wait here, in
// order, up to a bound (below). Each thread is handed up to two hashes, the one it runs and the one it takes
// next the moment that one ends, so that no thread stands idle waiting for the event loop to hand it the next.
import { availableParallelism } from "node:os";
import { env } from "@/env";
import { ServiceBusy } from "@/http/errors";
import { requestContext } from "@/http/request-context";
import { runOnHashingThread, type HashAnswer, type HashJob } from "@/users/hashing-threads";

export { HashingThreadStopped } from "@/users/hashing-threads";

const OPTIONS = { algorithm: 2 /* Argon2id */, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** Hashes handed to each thread at once: the one it runs and the one it takes next. */
export const HASHES_PER_THREAD = 2;

/** Hashes that run at once in one process: its share of the cores. */
export function hashingSlots(config: { workers: number }, cores = availableParallelism()): number {
  return Math.max(1, Math.ceil(cores / config.workers));
}

// One queue per process, on globalThis: the custom server loads this module twice (its own copy for the
// password grant, Next's bundle's for sign-in), and both share one set of threads.
//
// The queue is bounded (docs/rules/accounts.md#password-hashing): at most as many hashes wait as the process
// hashes in about QUEUE_SECONDS, HASH_QUEUE overriding. A hash or verification beyond that is refused at once
// with HashingBusy (503, Retry-After: 1) instead of waiting: unbounded, a flood of sign-ins with random
// e-mails made every other password check in the process wait seconds behind it. How fast the process hashes
// is measured when it first hashes (a few argon2id hashes with the options above, one after the other), and
// kept current from the time each hash then takes on its thread, so that a machine slowed by other work waits
// no longer than planned.
//
// Two queues, each with that bound, take turns at the places free at the threads: hashes asked for by an API
// request (one that route() serves, src/http/route.ts: the token endpoint's password grant, whose client has
// authenticated before the password is checked) and those of the browser's pages (web sign-in, sign-up,
// password reset), or of no request at all (the CLI). A flood of web sign-ins then neither fills the password
// grant's queue nor holds a grant back by more than one of its hashes per turn; neither side can starve the
// other. And the pages never hold every thread (with two or more): the pages' hashes, running or handed over,
// are at most one fewer than the threads, so that one thread always runs only the API's password checks,
// whose clients have authenticated first, and a grant arriving during a flood of sign-ins starts at once
// instead of waiting for a page's hash to end.
type Slots = {
  /** Hashes that run at once: the threads. */
  threads: number;
  /** Places at the threads: HASHES_PER_THREAD each. */
  size: number;
  /** Places taken (hashes running or handed over to run next). */
  busy: number;
  /** Of those, the places the pages' hashes hold (at most pageSlots()). */
  pagesBusy: number;
  /** The pages' queue. */
  waiting: Array<() => void>;
  /** The API's queue. */
  apiWaiting: Array<() => void>;
  /** Whose turn the next free place is when both queues wait. */
  apiTurn: boolean;
  /** Hashes refused because the queue was full (since the process started). */
  refused: number;
  /** Milliseconds one hash takes on one thread: measured, then a moving average of the hashes done. */
  msPerHash: number | null;
  measuring: Promise<void> | null;
};
const holder = globalThis as typeof globalThis & { __hashingSlots?: Slots };

/** The queue holds about this much hashing work (docs/rules/accounts.md#password-hashing). */
export const QUEUE_SECONDS = 2;
/** Hashes timed to measure the rate (after one that warms up). */
const MEASURED_HASHES = 3;
/** Weight of each completed hash in the moving average of the hashing time. */
const SMOOTHING = 0.05;

/** A password hash or check refused because too many already wait for the hashing slots: 503, Retry-After: 1. */
export class HashingBusy extends ServiceBusy {
  override name = "HashingBusy";
  constructor() {
    super("too many password checks right now, try again in a moment");
  }
}

/**
 * How many hashes may wait for a place: HASH_QUEUE when set, else as many as `slots` threads hashing side by
 * side do in QUEUE_SECONDS (at least one).
 */
export function hashQueueBound(config: { hashQueue: number | null }, slots: number, msPerHash: number): number {
  if (config.hashQueue !== null) return config.hashQueue;
  return Math.max(1, Math.floor((slots * QUEUE_SECONDS * 1000) / Math.max(msPerHash, 0.01)));
}

/** The bound now; unbounded only when the rate could not be measured (argon2id failing). */
function currentBound(config: { hashQueue: number | null }, slots: Slots): number {
  if (config.hashQueue === null && slots.msPerHash === null) return Number.POSITIVE_INFINITY;
  return hashQueueBound(config, slots.threads, slots.msPerHash ?? 0);
}

/** The queues' state now (for the tests). */
export function hashingLoad(): {
  threads: number;
  slots: number;
  pageSlots: number;
  busy: number;
  waiting: { api: number; pages: number };
  bound: number;
  msPerHash: number | null;
  refused: number;
} {
  const slots = state();
  return {
    threads: slots.threads,
    slots: slots.size,
    pageSlots: pageSlots(slots),
    busy: slots.busy,
    waiting: { api: slots.apiWaiting.length, pages: slots.waiting.length },
    bound: currentBound(env(), slots),
    msPerHash: slots.msPerHash,
    refused: slots.refused,
  };
}

function state(): Slots {
  return (holder.__hashingSlots ??= newSlots(hashingSlots(env())));
}

function newSlots(threads: number): Slots {
  return { threads, size: threads * HASHES_PER_THREAD, busy: 0, pagesBusy: 0, waiting: [], apiWaiting: [], apiTurn: true, refused: 0, msPerHash: null, measuring: null };
}

/** The places the pages' hashes may hold at once: fewer than the threads, one thread kept for the API (when
 * there are two or more), and one place with a single thread. */
const pageSlots = (slots: Slots) => Math.max(1, slots.threads - 1);

/**
 * Measures how fast this process hashes, once (at start: instrumentation.ts), so that no request pays for it;
 * otherwise the first hash does. Never throws.
 */
export function measureHashingAtStart(): Promise<void> {
  const slots = state();
  if (env().hashQueue !== null || slots.msPerHash !== null) return Promise.resolve();
  return (slots.measuring ??= measure(slots).catch(() => {}));
}

/** The hash a job made, or argon2's own error (thrown). */
function madeHash(answer: HashAnswer): string {
  if ("error" in answer) throw new Error(answer.error);
  return String(answer.value);
}

/** Times MEASURED_HASHES hashes with the production options, one after the other: ms per hash on a thread. */
async function measure(slots: Slots): Promise<void> {
  madeHash(await runOnHashingThread({ op: "hash", password: "warm-up", options: OPTIONS }, slots.threads));
  const times: number[] = [];
  for (let i = 0; i < MEASURED_HASHES; i++) {
    const answer = await runOnHashingThread({ op: "hash", password: "measure-" + i, options: OPTIONS }, slots.threads);
    madeHash(answer);
    times.push(answer.ms);
  }
  times.sort((a, b) => a - b);
  slots.msPerHash ??= times[Math.floor(times.length / 2)]!;
}

/** Runs `job` on a thread once it has a place: its answer (argon2's error included). */
async function withSlot(job: HashJob): Promise<HashAnswer> {
  const slots = state();
  const config = env();
  // The rate is needed only to bound the queue; it is measured once, before this process's first hash.
  if (config.hashQueue === null && slots.msPerHash === null) {
    // (Should argon2id itself fail, the queue stays unbounded rather than refusing every password.)
    await (slots.measuring ??= measure(slots).catch(() => {}));
  }
  const api = requestContext() !== undefined;
  if (slots.busy >= slots.size || (!api && slots.pagesBusy >= pageSlots(slots))) {
    const queue = api ? slots.apiWaiting : slots.waiting;
    if (queue.length >= currentBound(config, slots)) {
      slots.refused++;
      throw new HashingBusy();
    }
    await new Promise<void>((resolve) => queue.push(resolve)); // resolved holding its place (startNext)
  } else {
    slots.busy++;
    if (!api) slots.pagesBusy++;
  }
  try {
    const answer = await runOnHashingThread(job, slots.threads);
    if (slots.msPerHash !== null) slots.msPerHash += SMOOTHING * (answer.ms - slots.msPerHash);
    return answer;
  } finally {
    slots.busy--;
    if (!api) slots.pagesBusy--;
    startNext(slots);
  }
}

/** Free places go to the next in line, the two queues taking turns (the pages' within their share). */
function startNext(slots: Slots): void {
  while (slots.busy < slots.size) {
    const pagesMay = slots.waiting.length > 0 && slots.pagesBusy < pageSlots(slots);
    const apiMay = slots.apiWaiting.length > 0;
    if (!pagesMay && !apiMay) return;
    const api = apiMay && (slots.apiTurn || !pagesMay);
    slots.apiTurn = !api;
    slots.busy++;
    if (!api) slots.pagesBusy++;
    (api ? slots.apiWaiting : slots.waiting).shift()!();
  }
}

/** Throws HashingBusy when the queue is full. */
export async function hashPassword(password: string): Promise<string> {
  return madeHash(await withSlot({ op: "hash", password, options: OPTIONS }));
}

let dummyHash: Promise<string> | null = null;

/** The stored hash that unknown e-mails are checked against (made once; made again if it was refused). */
function dummy(): Promise<string> {
  // Stryker disable next-line StringLiteral: the dummy hash's password is never compared to anything (any password is false)
  dummyHash ??= hashPassword("not-a-real-password-" + Math.random()).catch((error: unknown) => {
    dummyHash = null;
    throw error;
  });
  return dummyHash;
}

/** Whether `password` matches `storedHash`; a stored hash that is not one (argon2's error) matches nothing. */
async function verifyOnThread(storedHash: string, password: string): Promise<boolean> {
  const answer = await withSlot({ op: "verify", hash: storedHash, password });
  return "value" in answer && answer.value === true;
}

/**
 * Checks a password against a stored hash. With no hash (unknown user) it still spends the same time on a
 * dummy hash, so that response times do not tell which e-mails exist. A hash that is not one is a wrong
 * password; a full queue is HashingBusy, thrown before any work; a hashing thread that stopped is
 * HashingThreadStopped (not decided: no wrong password).
 */
export async function verifyPassword(storedHash: string | null, password: string): Promise<boolean> {
  if (!storedHash) {
    await verifyOnThread(await dummy(), password);
    return false;
  }
  return verifyOnThread(storedHash, password);
}
