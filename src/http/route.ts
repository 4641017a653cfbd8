// One wrapper for every /api route handler: method dispatch (405 with Allow), CORS
// (docs/rules/endpoints.md#cors), and the single error path: ApiError -> its status and {"error"}
// (ServiceBusy, at an OAuth endpoint: 503 temporarily_unavailable, RFC 6749 4.1.2.1); database contention or
// outage -> 503 with Retry-After (src/db/errors.ts); a database error caused by what the caller sent (a
// value the column cannot take) -> 400, logged as a warning without a stack; anything else is logged with a
// request id and answered {"error": "server_error"}. Route parameters follow the input rule
// (src/http/input-text.ts): one holding a control character is a 400 naming it. Handlers stay plain (Request,
// context) => Response | Promise<Response> so that they run anywhere a Web Request does.
import { randomUUID } from "node:crypto";
import { clientAddress } from "@/http/client-address";
import { ApiError, InputError, methodNotAllowed, ServiceBusy } from "@/http/errors";
import { hasControlCharacter } from "@/http/input-text";
import { requestContext, runWithRequestContext } from "@/http/request-context";
import { checkedLines, json, setHeader, setHeaderLines, type CheckedLines } from "@/http/respond";
import { databaseFailure, databaseInputError } from "@/db/errors";
import { log, redact } from "@/observability/log";
import { countDatabaseError } from "@/observability/metrics";

/** Retry-After of a 503 for a database that cannot be reached (it is retried at most this often). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

export type RouteContext = { params: Promise<Record<string, string | string[] | undefined>> };
export type Handler = (request: Request, context: RouteContext) => Response | Promise<Response>;

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"] as const;
type Method = (typeof METHODS)[number];
type Exported = Record<Method | "OPTIONS", Handler>;

export type RouteOptions = {
  /** "oauth": error strings are RFC 6749 codes (a 405 or 415 is invalid_request). */
  kind?: "api" | "oauth";
  /**
   * Answer browser clients of any origin (bearer requests only; never cookie-authenticated ones). Headers the
   * route's protocol adds to the common ones: request headers a preflight allows, response headers exposed.
   */
  cors?: boolean | CorsHeaders;
};

export type CorsHeaders = { allowHeaders?: readonly string[]; exposeHeaders?: readonly string[] };

const SESSION_COOKIE = /(?:^|;\s*)(?:__Secure-)?next-auth\.session-token(?:\.\d+)?=/;

/** A request that would be authenticated by the browser session rather than a bearer token. */
export function isCookieRequest(request: Request): boolean {
  return !request.headers.has("authorization") && SESSION_COOKIE.test(request.headers.get("cookie") ?? "");
}

// The headers every CORS route allows and exposes (docs/rules/endpoints.md#cors); a route may add its own.
const ALLOW_HEADERS = ["Authorization", "Content-Type", "DPoP"];
const EXPOSE_HEADERS = ["WWW-Authenticate", "Location", "Retry-After", "Allow"];
const VARY_LINES = checkedLines({ Vary: "Origin" });

type CorsLines = { always: CheckedLines; preflight: CheckedLines };

/** The lines of a route's CORS answers, checked once (src/http/respond.ts) when the route is made. */
function corsLines(extra: CorsHeaders): CorsLines {
  const join = (common: string[], more: readonly string[] = []) => [...new Set([...common, ...more])].join(", ");
  return {
    always: checkedLines({ "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": join(EXPOSE_HEADERS, extra.exposeHeaders) }),
    preflight: checkedLines({ "Access-Control-Allow-Headers": join(ALLOW_HEADERS, extra.allowHeaders), "Access-Control-Max-Age": "600" }),
  };
}

const COMMON_CORS = corsLines({});

function withCors(request: Request, response: Response, allow: string[], lines: CorsLines): Response {
  if (isCookieRequest(request)) return response;
  setHeaderLines(response, lines.always);
  if (request.method === "OPTIONS") {
    setHeader(response, "Access-Control-Allow-Methods", allow.join(", "));
    setHeaderLines(response, lines.preflight);
  }
  setHeaderLines(response, VARY_LINES, true);
  return response;
}

/** An error string that is an OAuth error code rather than a sentence. */
const isCode = (error: string) => /^[a-z_]+$/.test(error);

/** The answer to a value the database refused (SQLSTATE class 22, src/db/errors.ts). */
export const DATABASE_INPUT_MESSAGE = "request: holds a value that cannot be stored";

export function errorResponse(error: unknown, request: Request, kind: "api" | "oauth"): Response {
  if (error instanceof InputError && kind === "oauth" && !isCode(error.error)) return json({ error: "invalid_request" }, 400);
  if (error instanceof ApiError) {
    if (error.status >= 500) log.warn("request failed", { status: error.status, error: error.error, path: redact(new URL(request.url).pathname) });
    // Busy (password hashing): RFC 6749 4.1.2.1's temporarily_unavailable at the OAuth endpoints.
    const message = kind === "oauth" && error instanceof ServiceBusy ? "temporarily_unavailable" : error.error;
    return json({ error: message }, error.status, error.headers);
  }
  const failure = databaseFailure(error);
  if (failure) {
    // docs/rules/operations.md#database-outages: the database is busy or cannot be reached: a 503 the client
    // may retry, never a 500.
    countDatabaseError(failure);
    log.warn(failure === "busy" ? "database busy" : "database unavailable", {
      path: redact(new URL(request.url).pathname),
      error: redact(error instanceof Error ? error.message.split("\n").filter(Boolean).at(-1) ?? error.name : String(error)),
    });
    if (failure === "busy") return json({ error: kind === "oauth" ? "temporarily_unavailable" : "service busy, retry" }, 503, { "Retry-After": "1" });
    return json({ error: kind === "oauth" ? "temporarily_unavailable" : "database unavailable" }, 503, { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) });
  }
  if (databaseInputError(error)) {
    // Caused by what the caller sent (e.g. U+0000, which PostgreSQL text cannot hold): a 400, never a 500.
    log.warn("database refused a value", {
      path: redact(new URL(request.url).pathname),
      error: redact(error instanceof Error ? error.message.split("\n").filter(Boolean).at(-1) ?? error.name : String(error)),
    });
    return json({ error: kind === "oauth" ? "invalid_request" : DATABASE_INPUT_MESSAGE }, 400);
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

export function route(handlers: Partial<Record<Method, (request: Request, context: RouteContext) => MaybePromise<Response>>>, options: RouteOptions = {}): Exported {
  const kind = options.kind ?? "api";
  const allow = [...METHODS.filter((method) => handlers[method]), "OPTIONS"];
  if (handlers.GET) allow.push("HEAD");

  const cors = options.cors ? (options.cors === true ? COMMON_CORS : corsLines(options.cors)) : null;
  const finish = (request: Request, response: Response) => (cors ? withCors(request, response, allow, cors) : response);

  // Not an async function: a handler that answers at once (the bearer read from the token cache) is answered
  // without a promise (see andThen(), below).
  const wrap =
    (method: Method | "OPTIONS"): Handler =>
    (request, context) => {
      let answer: MaybePromise<Response>;
      try {
        if (method === "OPTIONS") {
          answer = new Response(null, { status: 204, headers: { Allow: allow.join(", ") } });
        } else {
          const handler = handlers[method];
          if (!handler) throw methodNotAllowed(allow, kind === "oauth" ? "invalid_request" : "method not allowed");
          // The fast lane has made this request's context (with its after-response queue and the address,
          // read when first asked for: laneContext()). Under Next there is none yet: make one.
          answer = requestContext()?.after ? handler(request, context) : runWithRequestContext({ ip: clientAddress(request) }, () => handler(request, context));
        }
      } catch (error) {
        return finish(request, errorResponse(error, request, kind));
      }
      return answer instanceof Promise
        ? answer.then(
            (response) => finish(request, response),
            (error: unknown) => finish(request, errorResponse(error, request, kind)),
          )
        : finish(request, answer);
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

// Maybe-async steps (docs/design.md). AsyncLocalStorage (src/http/request-context.ts, and Next's own) keeps
// Node's async hooks on, and with them every promise made and every await costs about 0.2 µs more: the awaits
// of a bearer read answered from memory came to 2 µs, a quarter of its time in the handler. So the steps of
// that read (authenticate(), param(), getUser()) give back a value when they have one and a promise only when
// they must wait, and andThen() chains them without making one. Everywhere else, async/await as usual.
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)`, at once for a value, after it for a promise (which it returns, rejections included). */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

type RouteParamValues = Record<string, string | string[] | undefined>;
const KNOWN_PARAMS = Symbol("route parameters, known");
type KnownContext = RouteContext & { [KNOWN_PARAMS]?: RouteParamValues };

/**
 * A route context whose parameters param() reads at once (src/server/dispatch.ts); its `params`, the promise
 * Next's handlers receive, is made only when something asks for it. (A class: an object literal with a getter
 * is built property by property, several times the cost, on every request.)
 */
class KnownParamsContext<T extends RouteParamValues> {
  readonly [KNOWN_PARAMS]: T;
  #params: Promise<T> | undefined = undefined;
  constructor(values: T) {
    this[KNOWN_PARAMS] = values;
  }
  get params(): Promise<T> {
    return (this.#params ??= Promise.resolve(this[KNOWN_PARAMS]));
  }
}

export function knownParamsContext<T extends RouteParamValues>(values: T): { params: Promise<T> } {
  return new KnownParamsContext(values);
}

/** One string, refused (InputError, a 400 naming it) when it holds a control character (src/http/input-text.ts). */
function joinParam(name: string, value: string | string[] | undefined): string {
  const joined = Array.isArray(value) ? value.join("/") : (value ?? "");
  if (hasControlCharacter(joined)) throw new InputError(name);
  return joined;
}

/** A route parameter as one string (Next passes string | string[] | undefined): at once where the dispatcher
 * made the context (knownParamsContext()), after awaiting them under Next. */
export function param(context: RouteContext, name: string): MaybePromise<string> {
  const known = (context as KnownContext)[KNOWN_PARAMS];
  return known ? joinParam(name, known[name]) : context.params.then((values) => joinParam(name, values[name]));
}
