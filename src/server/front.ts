// What every connection and every request meets before any routing, in `npm start` and in each WORKERS worker
// (docs/rules/operations.md#connections, docs/rules/endpoints.md#request-targets, docs/security.md):
//
// Connections (slow clients must not hold a connection, and with it a share of the process, for minutes):
// - a request's headers must have arrived 10 s after it began (a new connection: after it opened; a kept-alive
//   one: after the request's first byte), and the whole request, body included, 30 s after: past either
//   deadline Node answers `408 Request Timeout` with `Connection: close` and closes the connection (it writes
//   nothing if an answer to that request has begun). Node's own headersTimeout and requestTimeout, checked
//   every second (connectionsCheckingInterval; its default, 30 s, would let a deadline slip by that much). A
//   body trickled one byte at a time is cut at the request deadline like any other; the time a handler
//   takes once the request has arrived is not counted.
// - an idle kept-alive connection closes 5 s after its last answer. Node closes it one second after the
//   keepAliveTimeout it advertises (`Keep-Alive: timeout=4`), so that a client counting on the advertised
//   value does not send into a connection being closed.
// - at most MAX_CONNECTIONS open connections per process; one over the cap is closed at once, unanswered.
//   A server that listens itself leaves that to net.Server's maxConnections (the connection is closed
//   before HTTP sees it); a WORKERS worker, which is handed its connections (accept()), counts its own.
// Node starts checking the header and request deadlines when a server emits 'listening'. A worker's server
// never listens (the primary accepts), so it emits the event itself: without it, a worker enforced neither
// deadline (tests: src/server/connections.int.test.ts, both ways).
//
// Requests: the request target first (src/server/request-target.ts: dot segments, absolute form), then the
// fast lane (src/server/fast-lane.ts) or whatever else serves the rest (Next under `npm start`), with
// Strict-Transport-Security on every answer when APP_URL is https (RFC 6797; the pages also get it from
// proxy.ts, the HTML answers of route handlers from src/http/html.ts). Web sign-ins from an address the
// sign-in limit refuses now are answered here, before Next (refuseLimitedSignIn).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { nowMs } from "@/clock";
import { env } from "@/env";
import { clientAddressFromForwarded } from "@/http/client-address";
import { JSON_TYPE } from "@/http/respond";
import { hstsHeaders } from "@/http/security-headers";
import { addressKey } from "@/limits/limiter";
import { signInsRefusedUntil } from "@/limits/refused-addresses";
import { appendPeerAddress, decideLane, FAST_LANE_SECURITY_HEADERS, pathOf, queueFastLane } from "@/server/fast-lane";
import { log } from "@/observability/log";
import { refuseTarget, screenTarget } from "@/server/request-target";
import type { RouteTable } from "@/server/routes";

export type ConnectionLimits = {
  /** Milliseconds from a request's start to the end of its headers. */
  headersTimeout: number;
  /** Milliseconds from a request's start to the end of its body. */
  requestTimeout: number;
  /** Milliseconds an idle kept-alive connection stays open (more than Node's one-second margin). */
  keepAlive: number;
  /** Milliseconds between two checks of the header and request deadlines. */
  checkEvery: number;
  /** Open connections at most (MAX_CONNECTIONS). */
  maxConnections: number;
};

export const CONNECTION_LIMITS: Omit<ConnectionLimits, "maxConnections"> = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAlive: 5_000,
  checkEvery: 1_000,
};

/** Node 20 closes an idle kept-alive socket this long after its keepAliveTimeout. */
const NODE_KEEP_ALIVE_MARGIN = 1_000;

export type FrontServer = {
  server: Server;
  /** The open connections (shutdown waits for them, then closes what is left). */
  connections: Set<Socket>;
  /** How many connections were ever taken (a count that stops growing once the accept queue is empty). */
  accepted: () => number;
  /** Serves a connection accepted elsewhere (a WORKERS worker's, from the primary), or closes it when over the cap. */
  accept: (socket: Socket) => void;
};

const DROP_LOG_EVERY_MS = 10_000;

/** An HTTP server with the connection rules above; `listening` false for one fed by accept() only. */
export function createFrontServer(listener: (req: IncomingMessage, res: ServerResponse) => void, limits: ConnectionLimits, listening: boolean): FrontServer {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeout,
      requestTimeout: limits.requestTimeout,
      keepAliveTimeout: Math.max(1, limits.keepAlive - NODE_KEEP_ALIVE_MARGIN),
      connectionsCheckingInterval: limits.checkEvery,
    },
    listener,
  );
  server.maxConnections = limits.maxConnections;
  const connections = new Set<Socket>();
  let accepted = 0;
  server.on("connection", (socket: Socket) => {
    accepted++;
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
  });

  // Connections closed over the cap: one log line at most every 10 s, with how many (not one per connection:
  // they come in floods).
  let dropped = 0;
  let lastLog = -Infinity;
  const drop = () => {
    accepted++; // taken from the accept queue all the same
    dropped++;
    const now = performance.now(); // a duration, not a rule: not the clock
    if (now - lastLog >= DROP_LOG_EVERY_MS) {
      log.warn("connections over MAX_CONNECTIONS closed", { dropped, maxConnections: limits.maxConnections });
      dropped = 0;
      lastLog = now;
    }
  };
  server.on("drop", drop);

  if (!listening) server.emit("listening");
  const accept = (socket: Socket) => {
    if (connections.size >= limits.maxConnections) {
      socket.destroy();
      drop();
      return;
    }
    server.emit("connection", socket);
    socket.resume(); // handed over paused by the primary (pauseOnConnect)
  };
  return { server, connections, accepted: () => accepted, accept };
}

export type FrontOptions = {
  routes: RouteTable;
  /** APP_URL: the origin of the lane's Requests, the one authority an absolute-form target may name. */
  appUrl: string;
  /** Whether answers should close their connection (set while the server shuts down). */
  closing?: () => boolean;
  /** Told of each fast-lane request's work (shutdown waits for it). */
  track?: (work: Promise<void>) => void;
  /** Serves what the fast lane does not claim (Next under `npm start`). */
  other: (req: IncomingMessage, res: ServerResponse) => void;
};

/** next-auth's credentials sign-in (app/api/auth/[...nextauth]/route.ts). */
const SIGN_IN_CALLBACK = /^\/api\/auth\/callback\/credentials\/?$/;
/** A sign-in form is a few hundred bytes; a larger body from a refused address is not read. */
const SIGN_IN_BODY_MAX = 8 * 1024;
/**
 * How long a refused address's sign-in waits for its answer (less when the address has room sooner). A flood
 * from one address, answered at once, came back as fast as the answers went out (18,000 a second from 64
 * connections) and took a core from everyone else; held a second, each of its connections sends one sign-in
 * a second. It holds nothing the connection rules above do not already allow: a request may take 10 s to send
 * its headers, and the open connections are capped.
 */
export const REFUSED_SIGN_IN_DELAY_MS = 1_000;

/** Test hook: what waits before a refused address's sign-in is answered (ms asked), instead of a timer. */
export const frontHooks: { delayRefusal?: (ms: number) => Promise<void> } = {};
const delay = (ms: number) => frontHooks.delayRefusal?.(ms) ?? new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A web sign-in from an address whose sign-ins the limiter refuses now (src/limits/refused-addresses.ts) is
 * answered here, as next-auth answers a sign-in refused with "rate_limited" (src/auth/sign-in-status.ts): the
 * sign-in page's fetch (json=true in the body) gets 429 and {"url": ".../api/auth/error?error=rate_limited"},
 * a plain form post a redirect there; Retry-After says when the address has room again. The answer waits
 * REFUSED_SIGN_IN_DELAY_MS (or until the address has room, if sooner). Such refusals are not recorded one by
 * one in the audit log (the first refusal was): a flood would fill it. Returns false when the request goes on
 * to Next.
 */
function refuseLimitedSignIn(req: IncomingMessage, res: ServerResponse, origin: string, headers: ReadonlyArray<readonly [string, string]>): boolean {
  const forwarded = req.headers["x-forwarded-for"];
  const address = addressKey(clientAddressFromForwarded(Array.isArray(forwarded) ? forwarded.join(", ") : (forwarded ?? null), env().trustProxy));
  const until = signInsRefusedUntil(address, nowMs());
  if (until === null) return false;
  const errorUrl = `${origin}/api/auth/error?error=rate_limited`;
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= SIGN_IN_BODY_MAX) chunks.push(chunk);
  });
  req.on("end", () => void delay(Math.min(REFUSED_SIGN_IN_DELAY_MS, Math.max(0, until - nowMs()))).then(() => answer()));
  const answer = () => {
    if (res.writableEnded || res.destroyed) return;
    const json = size <= SIGN_IN_BODY_MAX && new URLSearchParams(Buffer.concat(chunks).toString("utf8")).get("json") === "true";
    const lines: string[] = [];
    for (const [name, value] of headers) lines.push(name, value);
    lines.push("Cache-Control", "no-store", "Retry-After", String(Math.max(1, Math.ceil((until - nowMs()) / 1000))));
    if (json) {
      const body = JSON.stringify({ url: errorUrl });
      res.writeHead(429, [...lines, "Content-Type", JSON_TYPE, "Content-Length", String(Buffer.byteLength(body))]);
      res.end(body);
    } else {
      res.writeHead(302, [...lines, "Location", errorUrl, "Content-Length", "0"]);
      res.end();
    }
  };
  return true;
}

/** The request listener: the request target, then the fast lane or `other`. */
export function frontListener(options: FrontOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const app = new URL(options.appUrl);
  const hsts = hstsHeaders(app.protocol === "https:");
  const refusalHeaders = [...FAST_LANE_SECURITY_HEADERS, ...hsts];
  const lane = { origin: app.origin, closing: options.closing, extraHeaders: hsts };
  return (req, res) => {
    const refusal = screenTarget(req, app.host);
    if (refusal) {
      refuseTarget(res, refusal, refusalHeaders);
      return;
    }
    appendPeerAddress(req);
    const decision = decideLane(options.routes, pathOf(req.url));
    if (decision) {
      const work = queueFastLane(req, res, decision, lane);
      options.track?.(work);
      return;
    }
    if (req.method === "POST" && SIGN_IN_CALLBACK.test(pathOf(req.url)) && refuseLimitedSignIn(req, res, app.origin, refusalHeaders)) return;
    for (const [name, value] of hsts) res.setHeader(name, value);
    options.other(req, res);
  };
}
