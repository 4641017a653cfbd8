// `npm start`: a custom Next.js server (next({ dev: false }), prepare(), getRequestHandler(); a documented
// deployment mode) with a fast lane in front (docs/design.md). Connections and request targets first meet the
// rules of src/server/front.ts (deadlines, MAX_CONNECTIONS, dot segments and absolute-form targets refused,
// HSTS under https). Every request then gets the socket's address appended to X-Forwarded-For
// (src/http/client-address.ts); /api (but next-auth's /api/auth/) and the route handlers under /.well-known go
// to the route-handler exports directly (src/server/fast-lane.ts, staged per turn of the event loop), and
// pages, /api/auth/*, /_next/* and everything else to Next.
//
// Graceful shutdown (docs/rules/operations.md#shutdown) on SIGTERM and SIGINT (src/server/workers.ts with
// WORKERS): stop accepting connections, let the requests in flight finish (with their after-response work) for
// up to SHUTDOWN_GRACE_MS, answer every request from then on with `Connection: close`, let idle keep-alive
// connections end at their keep-alive timeout rather than cutting them, stop the outbox sweep, close the
// database; the caller then exits 0. A single process handles the signals in scripts/serve.ts.
import next from "next";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Server as NetServer, type AddressInfo, type Socket } from "node:net";
import { stopMailSweep } from "@/email/sweep";
import { stopLogoutSweep } from "@/logout/sweep";
import { env } from "@/env";
import { disconnectDb } from "@/db/client";
import { CONNECTION_LIMITS, createFrontServer, frontListener } from "@/server/front";
import { acceptQueueDrained } from "@/server/listener";
import { log } from "@/observability/log";
import { metrics, observeRequest } from "@/observability/metrics";
import { buildRouteTable, preload } from "@/server/routes";

export const SHUTDOWN_GRACE_MS = 10_000;

export type AppServerOptions = {
  dir: string;
  /** Where the fast lane's route modules are: `${dir}/app` (TypeScript, under tsx and in the tests), or
   * dist/app, compiled by `npm run build` (scripts/build-server.ts), when the server runs compiled. */
  routesDir?: string;
  port: number;
  appUrl: string;
  /** false in a WORKERS worker: the primary accepts the connections and hands them over (accept()). */
  listen?: boolean;
};

export type AppServer = {
  port: number;
  /** Serves a connection accepted elsewhere (a worker's, from the primary: src/server/workers.ts). */
  accept: (socket: Socket) => void;
  shutdown: (reason: string) => Promise<void>;
};

export async function startAppServer(options: AppServerOptions): Promise<AppServer> {
  const nextApp = next({ dev: false, dir: options.dir, port: options.port });
  const routes = buildRouteTable(options.routesDir ?? `${options.dir}/app`);
  metrics(); // this process's registry (and, in a WORKERS worker, its answer to the primary's collection)
  // Next first: it sets up the runtime (globalThis.AsyncLocalStorage) that next/server, which route modules
  // import, needs when it is first loaded. Nothing imported above this line may load next/server.
  await nextApp.prepare();
  await preload(routes);
  const handleWithNext = nextApp.getRequestHandler();

  let closing = false;
  const inFlight = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  const config = env();
  const nextHandler = (req: IncomingMessage, res: ServerResponse) => {
    if (closing) res.setHeader("Connection", "close");
    const started = performance.now(); // a duration for the latency histogram, not a rule
    res.once("finish", () => observeRequest("(next)", req.method ?? "GET", res.statusCode, (performance.now() - started) / 1000));
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
  };
  const listening = options.listen ?? true;
  // Open connections, so that shutdown can wait for them and, at the end of its grace period, close them.
  const { server, connections, accepted, accept } = createFrontServer(
    frontListener({ routes, appUrl: options.appUrl, closing: () => closing, track, other: nextHandler }),
    { ...CONNECTION_LIMITS, maxConnections: config.maxConnections },
    listening,
  );
  if (listening) {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, () => resolve());
    });
  }
  const port = listening ? (server.address() as AddressInfo).port : options.port;

  if (config.clientIdMetadataInsecureOrigin !== null) {
    // docs/rules/tokens.md#client-id-metadata-documents: for tests and development only.
    log.warn("CLIENT_ID_METADATA_INSECURE_ORIGIN is set: client metadata documents are fetched over http from this origin; never set it in production", {
      origin: config.clientIdMetadataInsecureOrigin,
    });
  }

  let stopped: Promise<void> | null = null;
  const shutdown = (reason: string) =>
    (stopped ??= (async () => {
      closing = true; // from now on every response says Connection: close, and its connection then closes
      log.info("shutting down: finishing requests in flight", { reason, inFlight: inFlight.size });
      // Stop accepting (a worker accepts nothing itself: its primary has stopped handing connections over),
      // once the connections that were already made have been taken from the kernel's queue (closing the
      // listener would reset them). Not http's close(), which also drops every idle keep-alive connection at
      // once, and with it a request already on its way over one (see below).
      await acceptQueueDrained(accepted);
      if (listening) {
        NetServer.prototype.close.call(server);
        log.info("no longer accepting connections", { inFlight: inFlight.size });
      }
      // Requests in flight finish, and their connections close after them. Idle keep-alive connections are
      // not cut: a client may already be sending a request over one (it counts on the keep-alive timeout it
      // was told, less a margin); a request that arrives is served with Connection: close, and a connection
      // that stays idle ends at the keep-alive timeout (5 s), as always.
      const deadline = performance.now() + SHUTDOWN_GRACE_MS; // a duration, not a rule: not the clock
      // (A connection whose answer said Connection: close has ended its side; one handed over by a primary
      // may then wait for the client's end: it is done too.)
      const open = () => [...connections].some((socket) => !socket.writableEnded);
      while ((inFlight.size > 0 || open()) && performance.now() < deadline) {
        const tick = new Promise((resolve) => setTimeout(resolve, 100));
        await (inFlight.size > 0 ? Promise.race([Promise.allSettled([...inFlight]), tick]) : tick);
      }
      if (inFlight.size > 0) log.warn("shutdown grace period over: cutting off requests", { cutOff: inFlight.size });
      server.closeAllConnections();
      for (const socket of connections) socket.destroy(); // also those handed over by a primary
      await stopMailSweep();
      await stopLogoutSweep();
      await disconnectDb();
      await nextApp.close().catch(() => {});
      log.info("shut down");
    })());

  return { port, accept, shutdown };
}
