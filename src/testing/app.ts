// The integration tests' way into the app: the production dispatcher of the custom server's fast lane
// (src/server/dispatch.ts, src/server/fast-lane.ts) over the real route modules, so that tests exercise what
// `npm start` runs, with real Requests and a real database, without a build. `call()` goes in-process;
// `startServer()` puts the fast lane itself on a real socket (for independent HTTP clients such as
// oauth4webapi, and for what only a socket shows: the peer address, body limits, headers on the wire).
// Pages and next-auth's routes are Next's, and are tested end to end (e2e/).
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { env } from "@/env";
import { laneContext, runAfterTasks, runWithRequestContext, type AfterTask } from "@/http/request-context";
import { dispatch, routeTable } from "@/server/dispatch";
import { buildRouteTable, type RouteTable } from "@/server/routes";
import { heldBody, type Barrier } from "@/testing/race";
import { CONNECTION_LIMITS, createFrontServer, frontListener, type ConnectionLimits } from "@/server/front";

export { dispatch };

let everyRoute: RouteTable | null = null;

export const BASE = "http://localhost:3000";

type CallOptions = {
  body?: unknown;
  headers?: Record<string, string>;
  token?: string;
  raw?: string | Uint8Array;
  /** The body held at this barrier (src/testing/race.ts): the handler gets it once every request sharing the
   * barrier has started reading its own, so that the requests overlap. */
  heldBy?: Barrier;
};

/**
 * In-process request: `call("POST", "/api/x/", { body })`. JSON bodies unless `raw` is given. Like the fast
 * lane, work queued for after the response runs once the response has been read.
 */
export async function call(method: string, path: string, options: CallOptions = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const after: AfterTask[] = [];
  const held = options.heldBy && body !== undefined ? heldBody(options.heldBy, typeof body === "string" ? body : new TextDecoder().decode(body)) : undefined;
  // (Node's fetch needs `duplex` for a streamed request body.)
  const request = new Request(BASE + path, { method, headers, body: (held ?? body) as BodyInit | undefined, ...(held ? { duplex: "half" } : {}) } as RequestInit);
  // The fast lane's table, plus the few route handlers outside /api that production leaves to Next.
  everyRoute ??= buildRouteTable(undefined, "all");
  const response = await runWithRequestContext(laneContext(request, after), () => dispatch(request, everyRoute!));
  const text = await response.text();
  await runAfterTasks(after);
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json: json as Record<string, unknown> & { error?: string } };
}

/**
 * The production request listener and connection rules (src/server/front.ts: request targets, the fast lane,
 * deadlines, the connection cap) on a real socket (127.0.0.1, a free port), without Next: a path the lane
 * does not claim answers a plain 404 here. `limits` replaces production's (shorter deadlines for the tests
 * of them); `handOver` serves the connections the way a WORKERS worker does, handed over by a listener
 * that accepts them paused, as the primary's does (src/server/workers.ts).
 */
export async function startServer(options: { limits?: Partial<ConnectionLimits>; handOver?: boolean } = {}): Promise<{ url: string; close: () => Promise<void> }> {
  const routes = routeTable();
  const listener = frontListener({
    routes,
    appUrl: env().appUrl, // as in production: Requests carry the public origin
    other: (_req, res) => void res.writeHead(404, { "Content-Type": "text/plain" }).end("not served without Next"),
  });
  const limits = { ...CONNECTION_LIMITS, maxConnections: env().maxConnections, ...options.limits };
  const front = createFrontServer(listener, limits, !options.handOver);
  const primary = options.handOver ? createNetServer({ pauseOnConnect: true }, front.accept) : null;
  const listening = primary ?? front.server;
  await new Promise<void>((done) => listening.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`,
    close: () =>
      new Promise((done) => {
        front.server.closeAllConnections();
        for (const socket of front.connections) socket.destroy();
        if (primary) primary.close(() => front.server.close(() => done()));
        else front.server.close(() => done());
      }),
  };
}
