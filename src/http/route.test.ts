import { describe, expect, it } from "vitest";
import { ApiError } from "@/http/errors";
import { route } from "@/http/route";

const context = { params: Promise.resolve({}) };
const get = (handler: () => Promise<Response>, options = {}) => route({ GET: handler }, options).GET(new Request("http://x/api/thing/5"), context);

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

  it("answers a method the route does not have with 405, Allow, and JSON", async () => {
    const handlers = route({ GET: async () => new Response("ok") });
    const res = await handlers.DELETE(new Request("http://x/api/thing/5", { method: "DELETE" }), context);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, OPTIONS, HEAD");
    expect(await res.json()).toEqual({ error: "method not allowed" });
  });
});
