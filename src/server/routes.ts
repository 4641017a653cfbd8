// The fast lane's route table (docs/design.md): the route handlers of app/api/**/route.ts and
// app/.well-known/**/route.ts, matched the way the app router matches them, so that the route files stay the
// one place a path is defined. next-auth's own routes (app/api/auth/) are left to Next: its handler reads
// Next's request scope.
//
// The table is built once per process from the files on disk (a new route file is picked up at the next
// start, never by a scan per request): static paths in a map, dynamic ones in app-router precedence (per
// segment: static, then [param], then [...catchAll], then [[...optional]]). Route groups "(name)" add no
// segment; private folders "_name" are not routable. Matching ignores a trailing slash
// (docs/rules/endpoints.md#paths).
import { readdirSync, statSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";

export type RouteParams = Record<string, string | string[]>;
export type RouteHandler = (request: Request, context: { params: Promise<RouteParams> }) => Response | Promise<Response>;
export type RouteModule = Record<string, unknown>;

type Segment =
  | { kind: "static"; value: string }
  | { kind: "param"; name: string }
  | { kind: "catchAll"; name: string }
  | { kind: "optionalCatchAll"; name: string };

export type Route = {
  /** The app-router path, e.g. /api/user/[id]. */
  pattern: string;
  file: string;
  segments: Segment[];
  /** Imports the module once; later calls return the same promise. */
  load: () => Promise<RouteModule>;
  /** The module, once loaded (so that a request need not wait for load()'s settled promise). */
  module?: RouteModule;
};

export type RouteTable = {
  routes: Route[];
  byStaticPath: Map<string, Route>;
  dynamic: Route[];
};

/** Folders under app/ whose route handlers the fast lane serves. */
export const FAST_LANE_ROOTS = ["api", ".well-known"] as const;
/** Left to Next, with everything outside the roots. */
export const NEXT_ONLY = ["api/auth"] as const;

const ROUTE_FILE = /^route\.(ts|js|mjs)$/;
const RANK = { static: 0, param: 1, catchAll: 2, optionalCatchAll: 3 } as const;

function parseSegment(folder: string): Segment {
  const optional = /^\[\[\.\.\.(.+)\]\]$/.exec(folder);
  if (optional) return { kind: "optionalCatchAll", name: optional[1]! };
  const catchAll = /^\[\.\.\.(.+)\]$/.exec(folder);
  if (catchAll) return { kind: "catchAll", name: catchAll[1]! };
  const param = /^\[(.+)\]$/.exec(folder);
  if (param) return { kind: "param", name: param[1]! };
  return { kind: "static", value: folder };
}

function compare(a: Route, b: Route): number {
  const length = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < length; i++) {
    const x = a.segments[i];
    const y = b.segments[i];
    if (!x || !y) return x ? 1 : -1; // the shorter path first where one is a prefix of the other
    const diff = RANK[x.kind] - RANK[y.kind];
    if (diff !== 0) return diff;
  }
  return 0;
}

/**
 * Scans app/<root>/ for route files once and compiles the table. Modules load on first use (or preload()).
 * `roots` "all": every route file under app/ (the integration tests also call app/consent/decide directly).
 */
export function buildRouteTable(appDir = resolve("app"), roots: readonly string[] | "all" = FAST_LANE_ROOTS): RouteTable {
  const routes: Route[] = [];
  for (const root of roots === "all" ? [""] : roots) {
    const dir = join(appDir, root);
    let files: string[];
    try {
      if (!statSync(dir).isDirectory()) continue;
      files = readdirSync(dir, { recursive: true }) as string[];
    } catch {
      continue;
    }
    for (const relativeFile of files) {
      const parts = relativeFile.split(sep);
      if (!ROUTE_FILE.test(parts.at(-1)!)) continue;
      const folders = [...(root ? [root] : []), ...parts.slice(0, -1)];
      if (folders.some((folder) => folder.startsWith("_") || folder.startsWith("@"))) continue;
      const urlFolders = folders.filter((folder) => !/^\(.+\)$/.test(folder));
      const pattern = "/" + urlFolders.join("/");
      if (NEXT_ONLY.some((prefix) => pattern === `/${prefix}` || pattern.startsWith(`/${prefix}/`))) continue;
      const file = join(dir, relativeFile);
      let loaded: Promise<RouteModule> | null = null;
      const route: Route = {
        pattern,
        file,
        segments: urlFolders.map(parseSegment),
        load: () => (loaded ??= (import(pathToFileURL(file).href) as Promise<RouteModule>).then((mod) => (route.module = mod))),
      };
      routes.push(route);
    }
  }
  routes.sort(compare);
  const byStaticPath = new Map<string, Route>();
  const dynamic: Route[] = [];
  for (const route of routes) {
    if (route.segments.every((segment) => segment.kind === "static")) byStaticPath.set(route.pattern, route);
    else dynamic.push(route);
  }
  return { routes, byStaticPath, dynamic };
}

/** Imports every route module now (the server does this at start, so no request pays for it). */
export async function preload(table: RouteTable): Promise<void> {
  await Promise.all(table.routes.map((route) => route.load()));
}

/** Whether a path's parts fit a route's segments (checked before any parameter object is made: most of the
 * routes tried for a path do not fit). */
function fits(segments: Segment[], parts: string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment.kind === "optionalCatchAll") return true;
    if (segment.kind === "catchAll") return i < parts.length;
    if (i >= parts.length || (segment.kind === "static" && segment.value !== parts[i])) return false;
  }
  return parts.length === segments.length;
}

function matchSegments(segments: Segment[], parts: string[]): RouteParams | null {
  if (!fits(segments, parts)) return null;
  const params: RouteParams = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment.kind === "catchAll" || segment.kind === "optionalCatchAll") {
      if (i < parts.length) params[segment.name] = parts.slice(i);
      break;
    }
    if (segment.kind === "param") params[segment.name] = parts[i]!;
  }
  return params;
}

export class MalformedPath extends Error {}

/**
 * The route for a path (without query string; leading and trailing slashes ignored), with its decoded
 * parameters; null when no route file matches. Throws MalformedPath for invalid percent-encoding.
 */
export function matchRoute(table: RouteTable, pathname: string): { route: Route; params: RouteParams } | null {
  const trimmed = pathname.replace(/^\/+|\/+$/g, "");
  const escaped = trimmed.includes("%");
  let parts: string[];
  try {
    parts = escaped ? trimmed.split("/").map(decodeURIComponent) : trimmed.split("/");
  } catch {
    throw new MalformedPath(pathname);
  }
  // A decoded "%2F" is part of one segment, never a separator.
  if (!escaped || parts.every((part) => !part.includes("/"))) {
    const direct = table.byStaticPath.get("/" + parts.join("/"));
    if (direct) return { route: direct, params: {} };
  }
  for (const route of table.dynamic) {
    const params = matchSegments(route.segments, parts);
    if (params) return { route, params };
  }
  return null;
}
