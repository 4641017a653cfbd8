// A thin dispatcher over the app's own route modules (app/**/route.ts), so that integration tests exercise the exact
// handlers Next.js serves, with real Requests and a real database, without a build. It routes like the app
// router: static segments before [param] before [...catchAll], with or without a trailing slash.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";

type RouteModule = Record<string, ((request: Request, context: { params: Promise<Record<string, string | string[]>> }) => Promise<Response> | Response) | undefined>;
type Route = { segments: string[]; file: string; rank: number[] };

const appDir = resolve("app");

function discover(): Route[] {
  const files = (readdirSync(appDir, { recursive: true }) as string[]).filter((file) => /(^|[\\/])route\.ts$/.test(file));
  return files
    .map((file) => {
      const segments = file.split(/[\\/]/).slice(0, -1);
      const rank = segments.map((segment) => (segment.startsWith("[...") ? 2 : segment.startsWith("[") ? 1 : 0));
      return { segments, file: join(appDir, file), rank };
    })
    .sort((a, b) => {
      for (let i = 0; i < Math.max(a.rank.length, b.rank.length); i++) {
        const diff = (a.rank[i] ?? -1) - (b.rank[i] ?? -1);
        if (diff !== 0) return diff;
      }
      return 0;
    });
}

let routes: Route[] | null = null;
const modules = new Map<string, Promise<RouteModule>>();

function match(route: Route, parts: string[]): Record<string, string | string[]> | null {
  const params: Record<string, string | string[]> = {};
  for (let i = 0; i < route.segments.length; i++) {
    const segment = route.segments[i]!;
    if (segment.startsWith("[...")) {
      if (i >= parts.length) return null;
      params[segment.slice(4, -1)] = parts.slice(i);
      return params;
    }
    const part = parts[i];
    if (part === undefined) return null;
    if (segment.startsWith("[")) params[segment.slice(1, -1)] = part;
    else if (segment !== part) return null;
  }
  return parts.length === route.segments.length ? params : null;
}

/** Answers a Request with the app's route handler for its path, as Next.js would. */
export async function dispatch(request: Request): Promise<Response> {
  routes ??= discover();
  const url = new URL(request.url);
  const parts = url.pathname.replace(/^\/+|\/+$/g, "").split("/").map(decodeURIComponent);
  for (const route of routes) {
    const params = match(route, parts);
    if (!params) continue;
    if (!modules.has(route.file)) modules.set(route.file, import(route.file) as Promise<RouteModule>);
    const mod = await modules.get(route.file)!;
    const method = request.method === "HEAD" ? "GET" : request.method;
    const handler = mod[method];
    if (!handler) return new Response(null, { status: 405 });
    return handler(request, { params: Promise.resolve(params) });
  }
  return new Response("not found", { status: 404 });
}

export const BASE = "http://localhost:3000";

type CallOptions = { body?: unknown; headers?: Record<string, string>; token?: string; raw?: string | Uint8Array };

/** In-process request: `call("POST", "/api/x/", { body })`. JSON bodies unless `raw` is given. */
export async function call(method: string, path: string, options: CallOptions = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await dispatch(new Request(BASE + path, { method, headers, body: body as BodyInit | undefined }));
  const text = await response.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json: json as Record<string, unknown> & { error?: string } };
}

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((v) => headers.append(key, v));
    else if (value !== undefined) headers.set(key, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(origin + req.url, {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
    // @ts-expect-error Node's fetch needs duplex for streamed request bodies.
    duplex: "half",
  });
}

async function send(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, key) => res.setHeader(key, value));
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** The same dispatcher on a real socket, for independent HTTP clients (oauth4webapi, openid-client). */
export async function startServer(): Promise<{ url: string; close: () => Promise<void> }> {
  let origin = "";
  const server = createServer((req, res) => {
    toRequest(req, origin)
      .then(dispatch)
      .then((response) => send(response, res))
      .catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: origin, close: () => new Promise((done) => server.close(() => done())) };
}
