// One wrapper for every /api route handler: method dispatch (405 with Allow), CORS (CONTRACT.md 1), and the
// single error path: ApiError -> its status and {"error"}; database contention -> 503; anything else is
// logged with a request id and answered {"error": "server_error"}. Handlers stay plain
// (Request, context) => Promise<Response> so that they run anywhere a Web Request does.
import { randomUUID } from "node:crypto";
import { clientAddress } from "@/http/client-address";
import { ApiError, methodNotAllowed } from "@/http/errors";
import { requestContext, runWithRequestContext } from "@/http/request-context";
import { json } from "@/http/respond";
import { log, redact } from "@/server/log";

export type RouteContext = { params: Promise<Record<string, string | string[] | undefined>> };
export type Handler = (request: Request, context: RouteContext) => Promise<Response>;

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"] as const;
type Method = (typeof METHODS)[number];
type Exported = Record<Method | "OPTIONS", Handler>;

export type RouteOptions = {
  /** "oauth": error strings are RFC 6749 codes (a 405 or 415 is invalid_request). */
  kind?: "api" | "oauth";
  /** Answer browser clients of any origin (bearer requests only; never cookie-authenticated ones). */
  cors?: boolean;
};

/** Prisma's codes for a transaction that timed out or lost a write conflict: retry, not a 500. */
const RETRYABLE = new Set(["P1008", "P2028", "P2034"]);

function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && RETRYABLE.has(code)) return true;
  const message = error instanceof Error ? error.message : "";
  return /SQLITE_BUSY|database is locked|could not serialize access|deadlock detected/i.test(message);
}

const SESSION_COOKIE = /(?:^|;\s*)(?:__Secure-)?next-auth\.session-token(?:\.\d+)?=/;

/** A request that would be authenticated by the browser session rather than a bearer token. */
export function isCookieRequest(request: Request): boolean {
  return !request.headers.has("authorization") && SESSION_COOKIE.test(request.headers.get("cookie") ?? "");
}

function withCors(request: Request, response: Response, allow: string[]): Response {
  if (isCookieRequest(request)) return response;
  response.headers.set("Access-Control-Allow-Origin", "*");
  response.headers.set("Access-Control-Expose-Headers", "WWW-Authenticate, Location, Retry-After, Allow");
  if (request.method === "OPTIONS") {
    response.headers.set("Access-Control-Allow-Methods", allow.join(", "));
    response.headers.set("Access-Control-Allow-Headers", "Authorization, Content-Type");
    response.headers.set("Access-Control-Max-Age", "600");
  }
  response.headers.append("Vary", "Origin");
  return response;
}

export function errorResponse(error: unknown, request: Request, kind: "api" | "oauth"): Response {
  if (error instanceof ApiError) {
    if (error.status >= 500) log.warn("request failed", { status: error.status, error: error.error, path: redact(new URL(request.url).pathname) });
    return json({ error: error.error }, error.status, error.headers);
  }
  if (isRetryable(error)) {
    log.warn("database busy", { path: redact(new URL(request.url).pathname) });
    return json({ error: kind === "oauth" ? "temporarily_unavailable" : "service busy, retry" }, 503, { "Retry-After": "1" });
  }
  const requestId = randomUUID();
  log.error("unexpected error", {
    requestId,
    method: request.method,
    path: redact(new URL(request.url).pathname),
    error: redact(error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ""}` : String(error)),
  });
  return json({ error: "server_error" }, 500, { "X-Request-Id": requestId });
}

export function route(handlers: Partial<Record<Method, Handler>>, options: RouteOptions = {}): Exported {
  const kind = options.kind ?? "api";
  const allow = [...METHODS.filter((method) => handlers[method]), "OPTIONS"];
  if (handlers.GET) allow.push("HEAD");

  const wrap =
    (method: Method | "OPTIONS"): Handler =>
    async (request, context) => {
      let response: Response;
      try {
        if (method === "OPTIONS") {
          response = new Response(null, { status: 204, headers: { Allow: allow.join(", ") } });
        } else {
          const handler = handlers[method];
          if (!handler) throw methodNotAllowed(allow, kind === "oauth" ? "invalid_request" : "method not allowed");
          // The fast lane has made this request's context (with its after-response queue): fill in the
          // address. Under Next there is none yet: make one.
          const own = requestContext();
          if (own?.after && own.ip === null) {
            own.ip = clientAddress(request);
            response = await handler(request, context);
          } else {
            response = await runWithRequestContext({ ip: clientAddress(request) }, () => handler(request, context));
          }
        }
      } catch (error) {
        response = errorResponse(error, request, kind);
      }
      return options.cors ? withCors(request, response, allow) : response;
    };

  return {
    GET: wrap("GET"),
    POST: wrap("POST"),
    PUT: wrap("PUT"),
    DELETE: wrap("DELETE"),
    PATCH: wrap("PATCH"),
    OPTIONS: wrap("OPTIONS"),
  };
}

/** A route parameter as one string (Next passes string | string[] | undefined). */
export async function param(context: RouteContext, name: string): Promise<string> {
  const value = (await context.params)[name];
  return Array.isArray(value) ? value.join("/") : (value ?? "");
}
