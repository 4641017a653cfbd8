import { describe, expect, it } from "vitest";
import { ApiError, notFound } from "@/http/errors";
import { andThen, isCookieRequest, knownParamsContext, param, route } from "@/http/route";

const context = { params: Promise.resolve({}) };
const get = (handler: () => Response | Promise<Response>, options = {}) => route({ GET: handler }, options).GET(new Request("http://x/api/thing/5"), context);

describe("the one error path of every /api route", () => {
  it("answers an ApiError with its status, headers and {error} only", async () => {
    const res = await get(async () => {
      throw new ApiError(409, "name: already taken", { "X-Extra": "1" });
    });
    expect(res.status).toBe(409);
    expect(res.headers.get("x-extra")).toBe("1");
    expect(await res.json()).toEqual({ error: "name: already taken" });
  });

  it("answers an unexpected failure with 500 server_error and a request id, never the message or stack", async () => {
    const res = await get(async () => {
      throw new Error("connection string postgres://secret@db leaked?");
    });
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: "server_error" });
    expect(text).not.toContain("secret");
  });

  it("answers database contention (Prisma P2034, SQLITE_BUSY) with a retryable 503, not a 500", async () => {
    for (const error of [Object.assign(new Error("write conflict"), { code: "P2034" }), new Error("SqliteError: SQLITE_BUSY: database is locked")]) {
      const res = await get(async () => {
        throw error;
      });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.json()).toEqual({ error: "service busy, retry" });
    }
    const oauth = await get(async () => {
      throw Object.assign(new Error("timeout"), { code: "P2028" });
    }, { kind: "oauth" });
    expect(await oauth.json()).toEqual({ error: "temporarily_unavailable" });
  });

  it("answers a database that cannot be reached with a 503 to retry in 5 seconds, an OAuth endpoint with temporarily_unavailable", async () => {
    const unreachable = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const fail = async () => {
      throw unreachable();
    };
    for (const [kind, error] of [
      ["api", "database unavailable"],
      ["oauth", "temporarily_unavailable"],
    ] as const) {
      const res = await get(fail, { kind });
      expect({ status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() }, kind).toEqual({ status: 503, retryAfter: "5", body: { error } });
    }
  });

  it("answers a method the route does not have with 405, Allow, and JSON", async () => {
    const handlers = route({ GET: async () => new Response("ok") });
    const res = await handlers.DELETE(new Request("http://x/api/thing/5", { method: "DELETE" }), context);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, OPTIONS, HEAD");
    expect(await res.json()).toEqual({ error: "method not allowed" });
  });

  it("answers OPTIONS with 204 and Allow, listing HEAD only where there is a GET", async () => {
    const readable = route({ GET: async () => new Response("ok"), DELETE: async () => new Response(null, { status: 204 }) });
    const options = await readable.OPTIONS(new Request("http://x/api/thing/5", { method: "OPTIONS" }), context);
    expect({ status: options.status, allow: options.headers.get("allow") }).toEqual({ status: 204, allow: "GET, DELETE, OPTIONS, HEAD" });
    const writeOnly = route({ POST: async () => new Response("ok") });
    const preflight = await writeOnly.OPTIONS(new Request("http://x/api/thing", { method: "OPTIONS" }), context);
    expect(preflight.headers.get("allow")).toBe("POST, OPTIONS");
    const patch = await writeOnly.PATCH(new Request("http://x/api/thing", { method: "PATCH" }), context);
    expect({ status: patch.status, allow: patch.headers.get("allow") }).toEqual({ status: 405, allow: "POST, OPTIONS" });
    const put = await writeOnly.PUT(new Request("http://x/api/thing", { method: "PUT" }), context);
    expect(put.status).toBe(405);
  });

  it("answers a 405 on an OAuth endpoint with invalid_request", async () => {
    const oauth = route({ POST: async () => new Response("ok") }, { kind: "oauth" });
    const res = await oauth.GET(new Request("http://x/api/token"), context);
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 405, body: { error: "invalid_request" } });
  });

  it("adds CORS for bearer requests: any origin, the exposed headers, and on a preflight the methods, headers and max age", async () => {
    const handlers = route({ GET: async () => new Response("ok") }, { cors: true });
    const plain = await handlers.GET(new Request("http://x/api/thing", { headers: { authorization: "Bearer t", origin: "https://app.example" } }), context);
    expect(Object.fromEntries([...plain.headers].filter(([name]) => name.startsWith("access-control") || name === "vary"))).toEqual({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "WWW-Authenticate, Location, Retry-After, Allow",
      vary: "Origin",
    });
    const preflight = await handlers.OPTIONS(new Request("http://x/api/thing", { method: "OPTIONS", headers: { origin: "https://app.example" } }), context);
    expect(Object.fromEntries([...preflight.headers].filter(([name]) => name.startsWith("access-control")))).toEqual({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "WWW-Authenticate, Location, Retry-After, Allow",
      "access-control-allow-methods": "GET, OPTIONS, HEAD",
      "access-control-allow-headers": "Authorization, Content-Type, DPoP",
      "access-control-max-age": "600",
    });
    const withoutCors = await route({ GET: async () => new Response("ok") }).GET(new Request("http://x/api/thing", { headers: { origin: "https://app.example" } }), context);
    expect(withoutCors.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("never adds CORS to a request that a session cookie would authenticate", async () => {
    const handlers = route({ GET: async () => new Response("ok") }, { cors: true });
    for (const cookie of ["next-auth.session-token=x", "a=1; next-auth.session-token.0=x", "__Secure-next-auth.session-token=x"]) {
      const request = new Request("http://x/api/thing", { headers: { cookie, origin: "https://evil.example" } });
      expect(isCookieRequest(request), cookie).toBe(true);
      expect((await handlers.GET(request, context)).headers.get("access-control-allow-origin")).toBeNull();
    }
    expect(isCookieRequest(new Request("http://x", { headers: { cookie: "other=next-auth.session-token" } }))).toBe(false);
    expect(isCookieRequest(new Request("http://x", { headers: { cookie: "xnext-auth.session-token=1" } }))).toBe(false);
    expect(isCookieRequest(new Request("http://x", { headers: { cookie: "next-auth.session-token=x", authorization: "Bearer t" } }))).toBe(false);
    expect(isCookieRequest(new Request("http://x"))).toBe(false);
  });

  it("answers 500 server_error when a handler throws something that is not an Error at all", async () => {
    for (const thrown of [null, undefined, "a string", 42]) {
      const res = await get(async () => {
        throw thrown;
      });
      expect({ status: res.status, body: await res.json() }).toEqual({ status: 500, body: { error: "server_error" } });
    }
  });

  it("reads a route parameter as one string", async () => {
    const params = (value: Record<string, string | string[] | undefined>) => ({ params: Promise.resolve(value) });
    expect(await param(params({ key: "abc" }), "key")).toBe("abc");
    expect(await param(params({ rest: ["a", "b", "c"] }), "rest")).toBe("a/b/c");
    expect(await param(params({}), "key")).toBe("");
  });

  it("reads the dispatcher's route parameters at once, and Next's after awaiting them", async () => {
    const known = knownParamsContext({ key: "abc", rest: ["a", "b"] });
    expect(param(known, "key")).toBe("abc"); // a value, not a promise
    expect(param(known, "rest")).toBe("a/b");
    expect(param(known, "none")).toBe("");
    expect(await known.params).toEqual({ key: "abc", rest: ["a", "b"] }); // and the promise, for whoever awaits it
    expect(known.params).toBe(known.params);
    let release!: (values: Record<string, string>) => void;
    const pending = param({ params: new Promise((resolve) => (release = resolve)) }, "key");
    expect(pending).toBeInstanceOf(Promise);
    release({ key: "late" });
    expect(await pending).toBe("late");
  });

  it("chains maybe-async steps: at once for values, after promises, with throws and rejections passed on", async () => {
    expect(andThen(2, (n) => n * 3)).toBe(6);
    const later = andThen(Promise.resolve(2), (n) => andThen(n + 1, (m) => m * 3));
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(9);
    const thrown = () => {
      throw new Error("now");
    };
    expect(() => andThen(1, thrown)).toThrow("now");
    await expect(andThen(Promise.reject(new Error("later")), () => 1)).rejects.toThrow("later");
    // A handler made of them: its throw takes route()'s error path, as an async handler's rejection does.
    const res = await get(() =>
      andThen(1, () => {
        throw notFound("no such thing");
      }),
    );
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 404, body: { error: "no such thing" } });
  });
});
