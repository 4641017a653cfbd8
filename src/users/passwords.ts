// Passwords: argon2id with OWASP's parameters (m = 19 MiB, t = 2, p = 1), about 11 ms of one core each.
//
// @node-rs/argon2 hashes on libuv's thread pool, which the process shares with file reads, dns.lookup (new
// database connections) and zlib. Unbounded, a burst of password grants fills the whole pool: hashes queue
// behind each other there, and so does everything else. So at most HASHING_SLOTS hashes run at once per
// process, one per core this process may use (the cores divided among the WORKERS), and never so many that
// fewer than two pool threads stay free; the rest wait here, in order. The workers that `npm start` forks get
// a pool big enough for their share (src/server/workers.ts).
import { hash, verify } from "@node-rs/argon2";
import { availableParallelism } from "node:os";
import { env } from "@/env";

const OPTIONS = { algorithm: 2 /* Argon2id */, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** Pool threads kept free of hashing for everything else on the pool. */
export const SPARE_POOL_THREADS = 2;

/** Concurrent hashes for one process: its share of the cores, within its thread pool. */
export function hashingSlots(config: { workers: number; threadPoolSize: number }, cores = availableParallelism()): number {
  const share = Math.max(1, Math.ceil(cores / config.workers));
  return Math.max(1, Math.min(share, config.threadPoolSize - SPARE_POOL_THREADS));
}

// One queue per process, on globalThis: the custom server loads this module twice (its own copy for the
// password grant, Next's bundle's for sign-in), and both share one thread pool.
type Slots = { size: number; busy: number; waiting: Array<() => void> };
const holder = globalThis as typeof globalThis & { __hashingSlots?: Slots };

async function withSlot<T>(work: () => Promise<T>): Promise<T> {
  const slots = (holder.__hashingSlots ??= { size: hashingSlots(env()), busy: 0, waiting: [] });
  if (slots.busy >= slots.size) await new Promise<void>((resolve) => slots.waiting.push(resolve));
  else slots.busy++;
  try {
    return await work();
  } finally {
    const next = slots.waiting.shift();
    if (next) next(); // the slot passes straight to the next in line
    else slots.busy--;
  }
}

export function hashPassword(password: string): Promise<string> {
  return withSlot(() => hash(password, OPTIONS));
}

let dummyHash: Promise<string> | null = null;

/**
 * Checks a password against a stored hash. With no hash (unknown user) it still spends the same time on a
 * dummy hash, so that response times do not tell which e-mails exist.
 */
export async function verifyPassword(storedHash: string | null, password: string): Promise<boolean> {
  if (!storedHash) {
    dummyHash ??= hashPassword("not-a-real-password-" + Math.random());
    const dummy = await dummyHash;
    await withSlot(() => verify(dummy, password)).catch(() => false);
    return false;
  }
  try {
    return await withSlot(() => verify(storedHash, password));
  } catch {
    return false;
  }
}
