// What route() writes to the log when a request fails (a request id for the 500, every path redacted:
// docs/rules/endpoints.md#records-and-identifiers), read from the process's real standard error while the
// handler runs. The log level is read once per process, so this file loads the modules afresh with
// LOG_LEVEL=debug.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

let route: typeof import("@/http/route").route;
let ApiError: typeof import("@/http/errors").ApiError;
const original = process.env.LOG_LEVEL;
beforeAll(async () => {
  vi.resetModules();
  process.env.LOG_LEVEL = "debug";
  ({ route } = await import("@/http/route"));
  ({ ApiError } = await import("@/http/errors"));
});
afterAll(() => {
  process.env.LOG_LEVEL = original;
  vi.resetModules();
});

/** Runs a GET through route() and returns its response and the JSON lines it wrote to standard error. */
async function failing(path: string, thrown: unknown) {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    const handlers = route({
      GET: async () => {
        throw thrown;
      },
    });
    const response = await handlers.GET(new Request(`http://localhost:3000${path}`), { params: Promise.resolve({}) });
    return { response, log: lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>) };
  } finally {
    process.stderr.write = write;
  }
}

const TOKEN = "tok_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG";

describe("log lines of failing requests", () => {
  it("an unexpected error: one line with the request id of the answer, the method, the redacted path and the error", async () => {
    const { response, log } = await failing(`/api/accesstoken/${TOKEN}`, new TypeError("boom"));
    expect(response.status).toBe(500);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ level: "error", message: "unexpected error", requestId: response.headers.get("x-request-id"), method: "GET", path: "/api/accesstoken/[redacted]" });
    expect(String(log[0]!.error)).toMatch(/^TypeError: boom\n/);
    expect(JSON.stringify(log)).not.toContain(TOKEN);
  });

  it("an unexpected error's line carries its stack; an Error without one, its name and message alone", async () => {
    const thrown = new RangeError("out of range");
    const { response, log } = await failing("/api/thing", thrown);
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 500, body: { error: "server_error" } });
    expect(thrown.stack).toMatch(/\n\s+at /);
    expect(log).toEqual([expect.objectContaining({ message: "unexpected error", error: `RangeError: out of range\n${thrown.stack}` })]);
    const stackless = new Error("no trace");
    delete (stackless as { stack?: string }).stack;
    const bare = await failing("/api/thing", stackless);
    expect(bare.log).toEqual([expect.objectContaining({ message: "unexpected error", error: "Error: no trace\n" })]);
  });

  it("a thrown value that is not an Error is logged as text", async () => {
    const { log } = await failing("/api/thing", "plain failure");
    expect(log[0]).toMatchObject({ message: "unexpected error", error: "plain failure" });
  });

  it("an ApiError of 500 or more: 'request failed' with its status, error and redacted path; below 500 nothing", async () => {
    const unavailable = await failing(`/api/bundle_permission_request/${TOKEN}/`, new ApiError(503, "database unavailable"));
    expect(unavailable.response.status).toBe(503);
    expect(unavailable.log).toEqual([
      expect.objectContaining({ level: "warn", message: "request failed", status: 503, error: "database unavailable", path: "/api/bundle_permission_request/[redacted]/" }),
    ]);
    const client = await failing("/api/thing", new ApiError(404, "no such thing"));
    expect(client.log).toEqual([]);
  });

  it("database contention: 'database busy' with the redacted path", async () => {
    const busy = await failing(`/api/oauth2token/${TOKEN}/`, Object.assign(new Error("conflict"), { code: "P2034" }));
    expect(busy.response.status).toBe(503);
    expect(busy.log).toEqual([expect.objectContaining({ level: "warn", message: "database busy", path: "/api/oauth2token/[redacted]/" })]);
  });

  it("an unreachable database: 'database unavailable' with the redacted path and the last line of the failure", async () => {
    // Prisma's shape: where it was called, the code around it, and the cause on the last line.
    const message = "\nInvalid `prisma.accessToken.findUnique()` invocation in\n/app/src/db/fast-sql.ts:42:7\n\n  41 const row =\n→ 42 await prisma.accessToken.findUnique(\n\nCan't reach database server at `db:5432`\n";
    const { response, log } = await failing(`/api/accesstoken/${TOKEN}`, Object.assign(new Error(message), { code: "P1001" }));
    expect({ status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() }).toEqual({
      status: 503,
      retryAfter: "5",
      body: { error: "database unavailable" },
    });
    expect(log).toEqual([
      expect.objectContaining({ level: "warn", message: "database unavailable", path: "/api/accesstoken/[redacted]", error: "Can't reach database server at `db:5432`" }),
    ]);
  });
});
