// Password hashing threads (docs/rules/accounts.md#password-hashing): argon2id (RFC 9106) runs on threads of
// the process's own (node:worker_threads), one per hashing slot, instead of libuv's pool.
//
// Why: on libuv's pool a thread that ended a hash stood idle until the event loop had taken the result and
// called argon2 again, and under load the event loop is busy with other requests; on a two-core machine
// serving password grants, about a tenth of the time the cores did nothing. Here a hash handed to the threads
// while they are all hashing waits at the threads themselves, and the first one to end its hash takes it at
// once: src/users/passwords.ts hands over up to two hashes per thread (one running, one ready).
//
// How: every job is posted to every thread, with an id written to a word of shared memory. A thread that
// reaches a job takes it by swapping the id for its own mark (Atomics.compareExchange); the others find the
// id gone and skip it. So the jobs handed over form one queue, in the order given, that any free thread takes
// from, and no job runs twice. A thread that stops (it should not: argon2's errors are answers, not crashes)
// fails the job it had taken, is replaced, and the new thread gets the jobs nobody had taken.
//
// The threads hold the process open only while they have work. They load @node-rs/argon2 from the
// application's node_modules (resolved from the entry script, then the working directory).
import { dirname, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import { ServiceBusy } from "@/http/errors";

export type HashJob = { op: "hash"; password: string; options: HashOptions } | { op: "verify"; hash: string; password: string };
export type HashOptions = { algorithm: number; memoryCost: number; timeCost: number; parallelism: number };
/** A job's answer: the hash or whether the password matched, or argon2's own error (a malformed hash); and how
 * long the thread spent on it. */
export type HashAnswer = { value: string | boolean; ms: number } | { error: string; ms: number };

/** The thread that had taken a job stopped before answering: the password was not checked (503, Retry-After: 1). */
export class HashingThreadStopped extends ServiceBusy {
  override name = "HashingThreadStopped";
  constructor() {
    super("the password check could not be done, try again in a moment");
  }
}

/** Words of shared memory for the jobs' ids: far more than ever wait at once (two per thread). */
const CLAIM_WORDS = 4096;
// The words of the control memory: 1 while a test holds the threads before they take a job, 1 while it holds
// them after (hashingThreadHooks); and the jobs the threads have answered.
const HOLD = 0;
const HOLD_TAKEN = 1;
const ANSWERED = 2;

// The thread's code: plain CommonJS, run by Node as it is (no bundler, no TypeScript loader sees it).
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const argon2 = require(require.resolve("@node-rs/argon2", { paths: workerData.paths }));
const claims = new Int32Array(workerData.claims);
const control = new Int32Array(workerData.control);
const mark = -1 - workerData.index;
parentPort.on("message", (job) => {
  for (let held; (held = Atomics.load(control, ${HOLD})) !== 0; ) Atomics.wait(control, ${HOLD}, held);
  if (Atomics.compareExchange(claims, job.id % ${CLAIM_WORDS}, job.id, mark) !== job.id) return;
  for (let held; (held = Atomics.load(control, ${HOLD_TAKEN})) !== 0; ) Atomics.wait(control, ${HOLD_TAKEN}, held);
  const started = performance.now();
  let answer;
  try {
    const value = job.op === "verify" ? argon2.verifySync(job.hash, job.password) : argon2.hashSync(job.password, job.options);
    answer = { id: job.id, value, ms: performance.now() - started };
  } catch (error) {
    answer = { id: job.id, error: String((error && error.message) || error), ms: performance.now() - started };
  }
  Atomics.add(control, ${ANSWERED}, 1);
  Atomics.notify(control, ${ANSWERED});
  parentPort.postMessage(answer);
});
`;

type Pending = { job: HashJob & { id: number }; resolve: (answer: HashAnswer) => void; reject: (error: Error) => void };
type Threads = {
  workers: Worker[];
  claims: Int32Array;
  control: Int32Array;
  pending: Map<number, Pending>;
  nextId: number;
};
const holder = globalThis as typeof globalThis & { __hashingThreads?: Threads };

/** Where the threads look for @node-rs/argon2: beside the entry script, then the working directory. */
function modulePaths(): string[] {
  return [...(process.argv[1] ? [dirname(resolve(process.argv[1]))] : []), process.cwd()];
}

function start(threads: Threads, index: number): Worker {
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { paths: modulePaths(), claims: threads.claims.buffer, control: threads.control.buffer, index },
  });
  worker.unref();
  worker.on("message", (answer: HashAnswer & { id: number }) => {
    const pending = threads.pending.get(answer.id);
    if (!pending) return;
    threads.pending.delete(answer.id);
    if (threads.pending.size === 0) for (const each of threads.workers) each.unref();
    pending.resolve("error" in answer ? { error: answer.error, ms: answer.ms } : { value: answer.value, ms: answer.ms });
  });
  worker.on("error", () => {}); // its end is handled on "exit"
  worker.once("exit", () => replace(threads, index, worker));
  return worker;
}

/** A thread stopped: the job it had taken fails; a new thread takes its place and the jobs nobody took. */
function replace(threads: Threads, index: number, stopped: Worker): void {
  if (threads.workers[index] !== stopped) return;
  const mark = -1 - index;
  for (const [id, pending] of threads.pending) {
    if (Atomics.load(threads.claims, id % CLAIM_WORDS) !== mark) continue;
    threads.pending.delete(id);
    pending.reject(new HashingThreadStopped());
  }
  const worker = start(threads, index);
  threads.workers[index] = worker;
  if (threads.pending.size > 0) worker.ref();
  for (const pending of threads.pending.values()) {
    if (Atomics.load(threads.claims, pending.job.id % CLAIM_WORDS) === pending.job.id) worker.postMessage(pending.job);
  }
}

function threadsOf(count: number): Threads {
  if (holder.__hashingThreads) return holder.__hashingThreads;
  const threads: Threads = {
    workers: [],
    claims: new Int32Array(new SharedArrayBuffer(CLAIM_WORDS * 4)),
    control: new Int32Array(new SharedArrayBuffer(3 * 4)),
    pending: new Map(),
    nextId: 0,
  };
  for (let index = 0; index < Math.max(1, count); index++) threads.workers.push(start(threads, index));
  return (holder.__hashingThreads = threads);
}

/**
 * Runs one hash or verification on the first of `count` threads (made on first use) to be free; resolves
 * with its answer. The caller bounds how many wait (src/users/passwords.ts).
 */
export function runOnHashingThread(job: HashJob, count: number): Promise<HashAnswer> {
  hashingThreadHooks.onJob?.(job);
  const threads = threadsOf(count);
  threads.nextId = (threads.nextId % 0x7ffffffe) + 1; // ids 1 .. 2^31 - 1: never 0 nor a thread's mark
  const posted = { ...job, id: threads.nextId };
  return new Promise<HashAnswer>((resolve, reject) => {
    if (threads.pending.size === 0) for (const worker of threads.workers) worker.ref();
    threads.pending.set(posted.id, { job: posted, resolve, reject });
    Atomics.store(threads.claims, posted.id % CLAIM_WORDS, posted.id);
    for (const worker of threads.workers) worker.postMessage(posted);
  });
}

/** The threads made so far (0 before the first hash). */
export function hashingThreadCount(): number {
  return holder.__hashingThreads?.workers.length ?? 0;
}

function holdAt(word: number): { release: () => void } {
  const control = holder.__hashingThreads?.control;
  if (!control) throw new Error("no hashing threads yet: hash once first");
  Atomics.store(control, word, 1);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      Atomics.store(control, word, 0);
      Atomics.notify(control, word);
    },
  };
}

/** Test hooks (src/users/*.test.ts, src/auth/*.test.ts, src/testing/hash-work.ts); production never calls them. */
export const hashingThreadHooks = {
  /** Told of every job handed to the threads (the one property production reads). */
  onJob: undefined as ((job: HashJob) => void) | undefined,
  /**
   * Holds every thread before it takes its next job, until release(), so that a test sees who waits where at
   * one moment without timing anything. A hash a thread had already begun ends as usual.
   */
  hold: () => holdAt(HOLD),
  /** Holds every thread right after it has taken its next job, before hashing it. */
  holdTaken: () => holdAt(HOLD_TAKEN),
  /** The threads (by index) that have taken a job not answered yet. */
  takenBy(): number[] {
    const threads = holder.__hashingThreads;
    if (!threads) return [];
    return [...threads.pending.keys()].map((id) => -1 - Atomics.load(threads.claims, id % CLAIM_WORDS)).filter((index) => index >= 0);
  },
  /**
   * Blocks this thread (the event loop included) until the threads have answered `count` more jobs than
   * `from` (a value of answered()), or `timeoutMs` passes; whether they did. The threads' answers are then
   * read by the event loop once it runs again.
   */
  waitForAnswers(from: number, count: number, timeoutMs: number): boolean {
    const control = holder.__hashingThreads!.control;
    const deadline = performance.now() + timeoutMs;
    for (let now; (now = Atomics.load(control, ANSWERED)) < from + count; ) {
      // Stryker disable next-line StringLiteral: a wait that ended otherwise loops once more and finds the deadline passed
      if (performance.now() >= deadline || Atomics.wait(control, ANSWERED, now, deadline - performance.now()) === "timed-out") return Atomics.load(control, ANSWERED) >= from + count;
    }
    return true;
  },
  /** Jobs the threads have answered since they were made. */
  answered: (): number => (holder.__hashingThreads ? Atomics.load(holder.__hashingThreads.control, ANSWERED) : 0),
  /** Stops one thread as a crash would. */
  async stop(index: number): Promise<void> {
    await holder.__hashingThreads?.workers[index]?.terminate();
  },
};
