// `npm start`: a custom Next.js server (next({ dev: false }), prepare(), getRequestHandler(); a documented
// deployment mode) with a fast lane in front (issue 8). Every request first gets the socket's address appended
// to X-Forwarded-For (src/http/client-address.ts); then /api (but next-auth's /api/auth/) and the route
// handlers under /.well-known go to the route-handler exports directly (src/server/fast-lane.ts), and pages,
// /api/auth/*, /_next/* and everything else to Next.
//
// Graceful shutdown (CONTRACT.md 11) on SIGTERM and SIGINT: stop accepting connections, let the requests in
// flight finish (and their after-response work) for up to SHUTDOWN_GRACE_MS, answer them with
// `Connection: close`, stop the outbox sweep, close the database, exit 0.
import next from "next";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import { stopMailSweep } from "@/email/sweep";
import { env } from "@/env";
import { disconnectDb } from "@/server/db";
import { appendPeerAddress, decideLane, pathOf, serveFastLane } from "@/server/fast-lane";
import { log } from "@/server/log";
import { buildRouteTable, preload } from "@/server/routes";
import { hashingSlots } from "@/users/passwords";

export const SHUTDOWN_GRACE_MS = 10_000;

export type AppServerOptions = { dir: string; port: number; appUrl: string };

export async function startAppServer(options: AppServerOptions): Promise<{ port: number; shutdown: (reason: string) => Promise<void> }> {
  const nextApp = next({ dev: false, dir: options.dir, port: options.port });
  const routes = buildRouteTable(`${options.dir}/app`);
  // Next first: it sets up the runtime (globalThis.AsyncLocalStorage) that next/server, which route modules
  // import, needs when it is first loaded. Nothing imported above this line may load next/server.
  await nextApp.prepare();
  await preload(routes);
  const handleWithNext = nextApp.getRequestHandler();
  const origin = new URL(options.appUrl).origin;

  let closing = false;
  const inFlight = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    appendPeerAddress(req);
    const decision = decideLane(routes, pathOf(req.url));
    if (decision) {
      track(serveFastLane(req, res, decision, { origin, closing: () => closing }));
      return;
    }
    if (closing) res.setHeader("Connection", "close");
    track(
      new Promise<void>((done) => {
        res.once("close", done);
        handleWithNext(req, res).catch((error: unknown) => {
          log.error("unexpected error in Next's request handler", { error: String(error) });
          if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
          res.end("Internal Server Error");
        });
      }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const config = env();
  const share = Math.ceil(availableParallelism() / config.workers);
  if (hashingSlots(config) < share) {
    log.warn("password hashing is limited by libuv's thread pool: set WORKERS or UV_THREADPOOL_SIZE to use every core", {
      hashingSlots: hashingSlots(config),
      cores: share,
    });
  }

  let stopped: Promise<void> | null = null;
  const shutdown = (reason: string) =>
    (stopped ??= (async () => {
      closing = true;
      log.info("shutting down: finishing requests in flight", { reason, inFlight: inFlight.size });
      server.close();
      server.closeIdleConnections();
      const deadline = performance.now() + SHUTDOWN_GRACE_MS; // a duration, not a rule: not the clock
      while (inFlight.size > 0 && performance.now() < deadline) {
        await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => setTimeout(resolve, 100))]);
        server.closeIdleConnections(); // keep-alive connections whose last response just went out
      }
      if (inFlight.size > 0) log.warn("shutdown grace period over: cutting off requests", { cutOff: inFlight.size });
      server.closeAllConnections();
      await stopMailSweep();
      await disconnectDb();
      await nextApp.close().catch(() => {});
      log.info("shut down");
    })());

  return { port, shutdown };
}
