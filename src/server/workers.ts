// WORKERS=n (docs/rules/operations.md#workers): n processes serving one port. The primary (forked with
// node:cluster, which also restarts the workers' module loader) applies the migrations, then listens itself
// and hands every new connection to the next worker in turn, as node:cluster's own round-robin does, but under
// our control: on SIGTERM or SIGINT it stops accepting, finishes handing over what it accepted, and only then
// tells each worker to drain (src/server/server.ts). With node:cluster's own listener, connections the primary
// had accepted but not yet handed to a busy worker were reset when the workers closed their servers. Workers
// ignore signals sent to them directly (a signal to the whole process group, Ctrl-C): the primary decides. The
// primary exits once every worker has (0 when each shut down cleanly), and restarts a worker that died on its
// own. Every guarantee holds across workers as across instances: the single-use claims, rate limits and the
// outbox claim live in the database, never in a process. The connection rules (header and request deadlines,
// idle keep-alive, MAX_CONNECTIONS per process) are each worker's, on the connections it is handed
// (src/server/front.ts).
import cluster, { type Worker } from "node:cluster";
import { createServer, type Socket } from "node:net";
import { log } from "@/observability/log";
import { serveClusterMetrics } from "@/observability/metrics";
import { acceptQueueDrained } from "@/server/listener";

const RESTART_DELAY_MS = 1_000;

/** Messages between the primary and a worker. */
export type WorkerMessage = { type: "ready" } | { type: "connection" } | { type: "shutdown"; reason: string };

export function runPrimary(count: number, port: number): void {
  const ready: Worker[] = [];
  let turn = 0;
  let stopping = false;
  let failed = false;
  let everReady = false;
  const handOffs = new Set<Promise<void>>();
  let accepted = 0;
  serveClusterMetrics(); // GET /api/metrics in any worker answers for all of them (src/observability/metrics.ts)

  const listener = createServer({ pauseOnConnect: true }, (socket: Socket) => {
    accepted++;
    const worker = ready[turn++ % Math.max(1, ready.length)];
    if (!worker) {
      socket.destroy(); // every worker died at once; the restarts are on their way
      return;
    }
    const sent = new Promise<void>((done) => {
      worker.send({ type: "connection" } satisfies WorkerMessage, socket, { keepOpen: false }, (error) => {
        if (error) socket.destroy();
        done();
      });
    });
    handOffs.add(sent);
    void sent.finally(() => handOffs.delete(sent));
  });

  const fork = () => {
    const worker = cluster.fork();
    worker.on("message", (message: WorkerMessage) => {
      if (message.type !== "ready") return;
      everReady = true;
      ready.push(worker);
      if (stopping) worker.send({ type: "shutdown", reason: "stopping" } satisfies WorkerMessage);
      else if (ready.length === count && !listener.listening) listener.listen(port, () => log.info("listening", { port, workers: count }));
    });
  };
  for (let i = 0; i < count; i++) fork();

  listener.on("error", (error) => {
    log.error("cannot listen", { port, error: String(error) });
    stop("listen failed", true);
  });

  cluster.on("exit", (worker: Worker, code, signal) => {
    const index = ready.indexOf(worker);
    if (index >= 0) ready.splice(index, 1);
    if (stopping) {
      if (code !== 0) failed = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    if (!everReady) {
      // A worker that cannot start (database unreachable, a broken build) would only die again.
      log.error("a worker failed to start; stopping", { pid: worker.process.pid, code, signal });
      stop("a worker failed to start", true);
      return;
    }
    log.error("worker died; starting another", { pid: worker.process.pid, code, signal });
    setTimeout(fork, RESTART_DELAY_MS).unref();
  });

  function stop(reason: string, failure = false): void {
    if (stopping) return;
    stopping = true;
    failed ||= failure;
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker);
    log.info("stopping: no new connections; workers finish what they hold", { reason, workers: workers.length });
    if (workers.length === 0) process.exit(failed ? 1 : 0);
    // Once the connections already made have been taken from the kernel's queue (closing the listener would
    // reset them), and whatever was accepted has reached its worker, the workers are told.
    void (async () => {
      await acceptQueueDrained(() => accepted);
      if (listener.listening) {
        listener.close();
        log.info("no longer accepting connections");
      }
      await Promise.allSettled([...handOffs]);
      for (const worker of workers) if (worker.isConnected()) worker.send({ type: "shutdown", reason } satisfies WorkerMessage);
    })();
  }
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => stop(signal));
}

/** In a worker: serve what the primary hands over, and shut down when it says so (or when it is gone). */
export function serveAsWorker(server: { accept: (socket: Socket) => void; shutdown: (reason: string) => Promise<void> }, exit: (code: number) => void): void {
  const shutdown = (reason: string) => server.shutdown(reason).then(() => exit(0), () => exit(1));
  process.on("message", (raw: unknown, handle: unknown) => {
    const message = raw as WorkerMessage;
    if (message.type === "connection" && handle) server.accept(handle as Socket);
    else if (message.type === "shutdown") void shutdown(message.reason);
  });
  process.on("disconnect", () => void shutdown("the primary is gone"));
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => log.info("signal to a worker: the primary decides when to stop", { signal }));
  }
  process.send!({ type: "ready" } satisfies WorkerMessage);
}
