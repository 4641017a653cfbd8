// WORKERS=n (CONTRACT.md 11): n processes serving on one port through node:cluster (the primary accepts and
// hands connections to the workers). The primary only supervises: it applied the migrations before forking,
// restarts a worker that died unexpectedly, forwards SIGTERM/SIGINT to every worker, and exits once they
// all have (0 when each shut down cleanly). Every guarantee holds across workers as across instances: the
// single-use claims, rate limits and the outbox claim live in the database, never in a process.
import cluster, { type Worker } from "node:cluster";
import type { Env } from "@/env";
import { log } from "@/server/log";
import { hashingSlots, SPARE_POOL_THREADS } from "@/users/passwords";

const RESTART_DELAY_MS = 1_000;

/**
 * What each worker gets on top of this process's environment: a libuv pool with room for its share of the
 * password hashing and SPARE_POOL_THREADS more (src/users/passwords.ts), never smaller than the one asked for.
 */
export function workerEnvironment(config: Pick<Env, "workers" | "threadPoolSize">): Record<string, string> {
  const share = hashingSlots({ workers: config.workers, threadPoolSize: Number.POSITIVE_INFINITY });
  return { UV_THREADPOOL_SIZE: String(Math.max(config.threadPoolSize, share + SPARE_POOL_THREADS, 4)) };
}

export function runPrimary(count: number, workerEnv: Record<string, string>): void {
  let stopping = false;
  let failed = false;
  let everListened = false;
  const fork = () => cluster.fork(workerEnv);
  for (let i = 0; i < count; i++) fork();

  cluster.on("listening", () => {
    everListened = true;
  });
  cluster.on("exit", (worker: Worker, code, signal) => {
    if (stopping) {
      if (code !== 0) failed = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    if (!everListened) {
      // A worker that cannot start (port in use, database unreachable) would only die again.
      log.error("a worker failed to start; stopping", { pid: worker.process.pid, code, signal });
      stopping = true;
      failed = true;
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill("SIGTERM");
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(1);
      return;
    }
    log.error("worker died; starting another", { pid: worker.process.pid, code, signal });
    setTimeout(fork, RESTART_DELAY_MS).unref();
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker);
      log.info("forwarding to workers", { signal, workers: workers.length });
      if (workers.length === 0) process.exit(0);
      for (const worker of workers) worker.process.kill(signal);
    });
  }
}
