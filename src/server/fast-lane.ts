// The fast lane of `npm start` (docs/design.md): /api (except next-auth's /api/auth/) and the route handlers
// under /.well-known go from the Node request straight to the route-handler exports (src/server/dispatch.ts)
// and back to the socket, without Next's per-request machinery. The conversion is lean: headers copied once, a
// body read only when the request has one, the 64 KiB limit checked on Content-Length before anything is read
// and while reading (at most one chunk past it is held, the handler answers its 413 in its own words, and the
// connection is closed rather than drained), the response written with one writeHead and one end. The requests
// that arrive in one turn of the event loop are served together, after it (queueFastLane, below).
//
// What clients saw from Next stays: the route handlers' statuses, headers and bodies, and the security headers
// next.config.mjs adds to every path (nosniff and framing), plus Strict-Transport-Security under an https
// APP_URL (FastLaneOptions.extraHeaders, src/server/front.ts); Next's `Vary: rsc, ...` (meaningless for JSON)
// is dropped, and bodies go with a Content-Length instead of chunked.
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { bodyReadAlready, MAX_BODY_BYTES } from "@/http/body";
import { laneContext, runAfterTasks, runWithRequestContext, type AfterTask } from "@/http/request-context";
import { JSON_TYPE, unreadHeaderLines, unreadText } from "@/http/respond";
import { log, redact } from "@/observability/log";
import { observeRequest } from "@/observability/metrics";
import { LaneRequest, requestUrl } from "@/server/lane-request";
import { invoke, malformedPath, noSuchEndpoint, type RouteMatch } from "@/server/dispatch";
import { matchRoute, MalformedPath, type RouteTable } from "@/server/routes";

/** next.config.mjs's headers for every path, as Next adds them to /api responses (a test keeps them equal). */
export const FAST_LANE_SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ["X-Content-Type-Options", "nosniff"],
  ["Referrer-Policy", "same-origin"],
  ["X-Frame-Options", "DENY"],
  ["Content-Security-Policy", "frame-ancestors 'none'"],
];
const SECURITY_NAMES = FAST_LANE_SECURITY_HEADERS.map(([name]) => name.toLowerCase());

/**
 * Appends the socket's peer address to X-Forwarded-For, as a proxy does, on every request the server passes
 * on (both lanes): the last entry is always the peer that connected to us (src/http/client-address.ts).
 * Next, which fills the header only when it is missing, then leaves it as it is.
 */
export function appendPeerAddress(req: IncomingMessage): void {
  const peer = req.socket.remoteAddress ?? "unknown";
  const existing = req.headers["x-forwarded-for"];
  req.headers["x-forwarded-for"] = existing ? `${existing}, ${peer}` : peer;
}

/** A request's path without its query string, leading slashes collapsed as Next does. */
export function pathOf(url: string | undefined): string {
  const raw = url ?? "/";
  const query = raw.indexOf("?");
  const path = query < 0 ? raw : raw.slice(0, query);
  return path.startsWith("//") ? path.replace(/^\/+/, "/") : path;
}

export type LaneDecision = { match: RouteMatch | null; malformed: boolean } | null;

/**
 * Which lane a path takes: null for Next (pages, /_next, /api/auth, everything else); otherwise the fast
 * lane, with the matched route (null: an /api path no route claims, answered 404).
 */
export function decideLane(routes: RouteTable, pathname: string): LaneDecision {
  const api = pathname === "/api" || pathname.startsWith("/api/");
  if (api && (pathname === "/api/auth" || pathname.startsWith("/api/auth/"))) return null;
  if (!api && !pathname.startsWith("/.well-known/")) return null;
  try {
    const match = matchRoute(routes, pathname);
    if (!api && !match) return null; // no route handler of ours: Next's 404 page, as before
    return { match, malformed: false };
  } catch (error) {
    if (error instanceof MalformedPath) return api ? { match: null, malformed: true } : null;
    throw error;
  }
}

const textual = /^(application\/(json|[\w.+-]+\+json)|text\/)/i;

type ReadResult = { body: Buffer | null; oversize: boolean };

/** The client went away before its request was read: nothing to answer, nothing to log. */
class ClientGone extends Error {}

/** Reads a request body up to the limit: past it, stops reading (the caller closes the connection). */
function readBody(req: IncomingMessage): Promise<ReadResult> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) return Promise.resolve({ body: null, oversize: true });
  if (declared === "0" || (declared === undefined && req.headers["transfer-encoding"] === undefined)) {
    return Promise.resolve({ body: null, oversize: false });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: ReadResult | null, error?: Error) => {
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      if (result) resolve(result);
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.pause();
        done({ body: Buffer.concat(chunks, size), oversize: true });
      }
    };
    const onEnd = () => done({ body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), oversize: false });
    const onError = () => done(null, new ClientGone()); // reset or aborted by the client
    const onClose = () => done(null, new ClientGone());
    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}

function toRequest(req: IncomingMessage, origin: string, body: Buffer | null): Request {
  const request = new LaneRequest(req.method ?? "GET", requestUrl(origin, req.url || "/"), req.headers, body as Uint8Array<ArrayBuffer> | null);
  if (body) bodyReadAlready(request, body); // readBody() takes these bytes as they are
  return request;
}

async function writeResponse(res: ServerResponse, response: Response, method: string, close: boolean, extra: ReadonlyArray<readonly [string, string]>): Promise<void> {
  // A TextResponse's header lines as they are (src/http/respond.ts); any other Response's Headers.
  const flat: string[] = [];
  const lines = unreadHeaderLines(response);
  if (lines) for (const [name, value] of lines) flat.push(name, value);
  else {
    response.headers.forEach((value, name) => void (name === "set-cookie" || flat.push(name, value)));
    for (const cookie of response.headers.getSetCookie()) flat.push("set-cookie", cookie);
  }
  let present = 0; // which of the security headers the response has set itself (bits, in SECURITY_NAMES' order)
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i]!;
    if (name === "content-length" || name === "transfer-encoding" || name === "connection") {
      flat.splice(i, 2);
      i -= 2;
      continue;
    }
    const security = SECURITY_NAMES.indexOf(name);
    if (security >= 0) present |= 1 << security;
  }
  for (let i = 0; i < FAST_LANE_SECURITY_HEADERS.length; i++) if (!(present & (1 << i))) flat.push(...FAST_LANE_SECURITY_HEADERS[i]!);
  for (const [name, value] of extra) if (!hasName(flat, name.toLowerCase())) flat.push(name, value);
  let payload: string | Buffer | null = null;
  if (method !== "HEAD") {
    // A TextResponse's text as it is (src/http/respond.ts); any other body read once, whole.
    payload = unreadText(response) ?? null;
    if (payload === null && response.body) {
      payload = textual.test(response.headers.get("content-type") ?? "") ? await response.text() : Buffer.from(await response.arrayBuffer());
    }
    if (payload !== null) flat.push("Content-Length", String(typeof payload === "string" ? Buffer.byteLength(payload) : payload.length));
  }
  if (close) flat.push("Connection", "close");
  if (res.destroyed) return; // the client went away while the handler ran: nothing to write, and 'close' has come
  res.writeHead(response.status, flat);
  // 'close' follows 'finish', and also comes when the client went away first ('finish' then never does).
  await new Promise<void>((done) => {
    res.once("close", done);
    res.end(payload ?? undefined);
  });
}

/** Whether flat header lines [name, value, ...] (lower-case names) hold `name`. */
function hasName(flat: string[], name: string): boolean {
  for (let i = 0; i < flat.length; i += 2) if (flat[i] === name) return true;
  return false;
}

function failure(res: ServerResponse, error: unknown, req: IncomingMessage, extra: ReadonlyArray<readonly [string, string]>): void {
  const requestId = randomUUID();
  log.error("unexpected error in the fast lane", {
    requestId,
    method: req.method,
    path: redact(pathOf(req.url)),
    error: redact(error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ""}` : String(error)),
  });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: "server_error" });
  res.writeHead(500, ["Content-Type", JSON_TYPE, "X-Request-Id", requestId, "Content-Length", String(body.length), ...FAST_LANE_SECURITY_HEADERS.flat(), ...extra.flat()]);
  res.end(body);
}

export type FastLaneOptions = {
  /** Origin of the Web Requests' URLs: APP_URL, the public origin (handlers use the path and query only). */
  origin: string;
  /** Whether responses should close their connection (set while the server shuts down). */
  closing?: () => boolean;
  /** Headers every answer carries unless it sets them itself: Strict-Transport-Security under https. */
  extraHeaders?: ReadonlyArray<readonly [string, string]>;
};

/**
 * Serves one request the lane claimed (decideLane), from body to socket; resolves once the response is
 * written and the request's after-response tasks have settled (shutdown waits for both). Never throws.
 */
export async function serveFastLane(req: IncomingMessage, res: ServerResponse, decision: NonNullable<LaneDecision>, options: FastLaneOptions): Promise<void> {
  const started = performance.now(); // a duration for the latency histogram, not a rule: not the clock
  const method = req.method ?? "GET";
  try {
    const { body, oversize } = method === "GET" || method === "HEAD" ? { body: null, oversize: false } : await readBody(req);
    let response: Response;
    const after: AfterTask[] = [];
    if (decision.malformed) response = malformedPath();
    else if (!decision.match) response = noSuchEndpoint();
    else {
      const request = toRequest(req, options.origin, body);
      const match = decision.match;
      response = await runWithRequestContext(laneContext(request, after), () => invoke(match, request));
    }
    // Past the limit the rest of the body stays unread: the connection closes after the answer.
    await writeResponse(res, response, method, oversize || (options.closing?.() ?? false), options.extraHeaders ?? []);
    observeRequest(decision.match?.route.pattern ?? "(none)", method, response.status, (performance.now() - started) / 1000);
    if (after.length) await runAfterTasks(after);
  } catch (error) {
    if (error instanceof ClientGone) res.destroy();
    else failure(res, error, req, options.extraHeaders ?? []);
  }
}

// Staging: the requests the lane claims within one turn of the event loop (those whose headers arrived in
// the same poll phase) are served one after the other in that turn's check phase (setImmediate), not each in
// the middle of reading the others. A request's code then runs while the previous one has just brought the
// same code and data into the CPU's caches, instead of after the parsing of other requests, the kernel's
// networking and other processes have pushed them out: measured through npm start under load, a bearer read
// cost 130-165 µs of CPU served at once and 66-80 µs staged, /api/health 62-80 and 40-52 (docs/benchmarks.md).
// A lone request waits only for the rest of the turn it arrived in. Order is kept (first come, first served).
let staged: Array<() => void> = [];

function serveStaged(): void {
  const batch = staged;
  staged = [];
  for (const serve of batch) serve();
}

/** serveFastLane(), staged as above: resolves once the response is written and its after-response work done. */
export function queueFastLane(req: IncomingMessage, res: ServerResponse, decision: NonNullable<LaneDecision>, options: FastLaneOptions): Promise<void> {
  return new Promise((done) => {
    staged.push(() => void serveFastLane(req, res, decision, options).then(done));
    if (staged.length === 1) setImmediate(serveStaged);
  });
}
