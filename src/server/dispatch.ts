// The one dispatcher of /api (and /.well-known) requests to the route-handler exports of app/**/route.ts,
// used by the custom server's fast lane (src/server/fast-lane.ts) and by the integration tests
// (src/testing/app.ts), so that the tests exercise what production runs. It answers like Next answers for a
// route module: HEAD falls back to GET (without the body), OPTIONS without an export is a 204 with `Allow`;
// beyond Next, a method the module lacks is a JSON 405 with `Allow` (docs/rules/endpoints.md#status-codes), a
// malformed path a JSON 400, and an /api path no route file claims a JSON 404, never an HTML page.
import { json } from "@/http/respond";
import { errorResponse, knownParamsContext } from "@/http/route";
import { buildRouteTable, matchRoute, MalformedPath, type Route, type RouteHandler, type RouteModule, type RouteParams, type RouteTable } from "@/server/routes";

export type RouteMatch = { route: Route; params: RouteParams };

const HANDLER_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"] as const;
const allowCache = new WeakMap<RouteModule, string>();

/** The methods a module answers, as Next lists them for an automatic OPTIONS: sorted, with HEAD and OPTIONS. */
function allowHeader(mod: RouteModule): string {
  let allow = allowCache.get(mod);
  if (allow === undefined) {
    const methods = new Set<string>(HANDLER_METHODS.filter((method) => typeof mod[method] === "function"));
    if (methods.has("GET")) methods.add("HEAD");
    methods.add("OPTIONS");
    allow = [...methods].sort().join(", ");
    allowCache.set(mod, allow);
  }
  return allow;
}

function handlerFor(mod: RouteModule, method: string): RouteHandler | null {
  const own = mod[method];
  if (typeof own === "function") return own as RouteHandler;
  if (method === "HEAD" && typeof mod.GET === "function") return mod.GET as RouteHandler;
  return null;
}

/** Runs the matched route's handler for the request's method. Never throws: failures become the error path. */
export async function invoke(match: RouteMatch, request: Request): Promise<Response> {
  try {
    const mod = match.route.module ?? (await match.route.load());
    const handler = handlerFor(mod, request.method);
    if (!handler) {
      if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: { Allow: allowHeader(mod) } });
      // A method no module can export (TRACE, CONNECT, ...): the methods the route answers, as its own OPTIONS
      // says (route() lists what it handles, though it exports every method so that Next never answers one).
      const own = typeof mod.OPTIONS === "function" ? await (mod.OPTIONS as RouteHandler)(new Request(request.url, { method: "OPTIONS" }), { params: Promise.resolve(match.params) }) : null;
      return json({ error: "method not allowed" }, 405, { Allow: own?.headers.get("allow") ?? allowHeader(mod) });
    }
    const response = await handler(request, knownParamsContext(match.params));
    if (request.method === "HEAD" && response.body) return new Response(null, response);
    return response;
  } catch (error) {
    return errorResponse(error, request, "api");
  }
}

export const noSuchEndpoint = () => json({ error: "no such endpoint" }, 404);
export const malformedPath = () => json({ error: "malformed path" }, 400);

let table: RouteTable | null = null;

/** This process's route table (app/ under the working directory), built on first use. */
export function routeTable(): RouteTable {
  table ??= buildRouteTable();
  return table;
}

/** Answers a Request with the app's route handler for its path, as the fast lane does. */
export async function dispatch(request: Request, routes: RouteTable = routeTable()): Promise<Response> {
  const { pathname } = new URL(request.url);
  let match: RouteMatch | null;
  try {
    match = matchRoute(routes, pathname);
  } catch (error) {
    if (error instanceof MalformedPath) return malformedPath();
    throw error;
  }
  return match ? invoke(match, request) : noSuchEndpoint();
}
