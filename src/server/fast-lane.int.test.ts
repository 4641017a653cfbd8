// The fast lane on a real socket (src/testing/app.ts startServer(): the production request listener minus
// Next): what clients see on the wire, the body limit before buffering, the peer address, and the
// after-response hook.
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "@/env";
import { db } from "@/db/client";
import { appendPeerAddress, decideLane, FAST_LANE_SECURITY_HEADERS, pathOf, queueFastLane } from "@/server/fast-lane";
import { buildRouteTable } from "@/server/routes";
import { startServer } from "@/testing/app";
import { passwordSession } from "@/testing/factories";

let server: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** One raw HTTP/1.1 exchange: what was written, everything read until the server closed or `waitMs` passed. */
function rawExchange(port: number, chunks: string[], waitMs = 15_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolveExchange) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    let closed = false;
    const finish = () => resolveExchange({ text, closed });
    const timer = setTimeout(() => {
      socket.destroy();
      finish();
    }, waitMs);
    socket.on("data", (data) => (text += data.toString()));
    socket.on("error", () => {});
    socket.on("close", () => {
      closed = true;
      clearTimeout(timer);
      finish();
    });
    socket.on("connect", () => {
      for (const chunk of chunks) socket.write(chunk);
    });
  });
}

const portOf = (url: string) => Number(new URL(url).port);

describe("responses on the wire", () => {
  it("carry next.config.mjs's security headers, as Next sends them on /api, and not Next's Vary", async () => {
    const configFile = pathToFileURL(resolve("next.config.mjs")).href;
    const config = ((await import(configFile)) as { default: unknown }).default as { headers: () => Promise<Array<{ source: string; headers: Array<{ key: string; value: string }> }>> };
    const everyPath = (await config.headers()).find((rule) => rule.source === "/:path*")!.headers;
    expect(everyPath.map(({ key, value }) => [key, value])).toEqual(FAST_LANE_SECURITY_HEADERS);
    const response = await fetch(`${server.url}/api/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
    for (const { key, value } of everyPath) expect(response.headers.get(key)).toBe(value);
    expect(response.headers.get("vary")).toBeNull();
    expect(response.headers.get("content-length")).toBe("15");
  });

  it("answer both trailing-slash forms directly, and HEAD without a body", async () => {
    for (const path of ["/api/user/1", "/api/user/1/"]) {
      const response = await fetch(server.url + path, { redirect: "manual" });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: "authentication required" });
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="api", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api", DPoP realm="api", algs="ES256 RS256", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api"');
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    }
    const head = await rawExchange(portOf(server.url), ["HEAD /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]);
    expect(head.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head.text.endsWith("\r\n\r\n")).toBe(true);
  });

  it("are JSON for /api itself, unknown /api paths and malformed paths", async () => {
    for (const [path, status, body] of [
      ["/api", 404, { error: "no such endpoint" }],
      ["/api/", 404, { error: "no such endpoint" }],
      ["/api/nothing/here/", 404, { error: "no such endpoint" }],
      ["/api/user/%E0%A4%A/", 400, { error: "malformed path" }],
    ] as const) {
      const response = await fetch(server.url + path);
      expect(response.status, path).toBe(status);
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await response.json()).toEqual(body);
    }
  });
});

describe("methods", () => {
  it("answers a method the Fetch standard forbids (TRACE) with the JSON 405 of any method a route lacks", async () => {
    const result = await rawExchange(portOf(server.url), ["TRACE /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]);
    expect(result.text).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    const allow = /\r\nallow: ([^\r]*)\r\n/i.exec(result.text)?.[1];
    expect(allow?.split(", ").sort()).toEqual(["GET", "HEAD", "OPTIONS"]);
    expect(result.text.endsWith('{"error":"method not allowed"}')).toBe(true);
  });
});

describe("the 64 KiB body limit", () => {
  it("answers a declared oversize body with the handler's 413 before the body has arrived, and closes the connection", async () => {
    const head = "POST /api/connect/oauth2/token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n";
    const result = await rawExchange(portOf(server.url), [head, "{".padEnd(1000, " ")]);
    expect(result.text).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(result.text).toMatch(/\r\nConnection: close\r\n/i);
    expect(result.text.endsWith('{"error":"invalid_request"}')).toBe(true);
    expect(result.closed).toBe(true);
  });

  it("stops reading a chunked body past the limit: 413 in the endpoint's own words, connection closed", async () => {
    const chunk = "x".repeat(16 * 1024);
    const body = Array.from({ length: 6 }, () => `${(chunk.length).toString(16)}\r\n${chunk}\r\n`);
    const result = await rawExchange(portOf(server.url), [
      "POST /api/bundle_permission_request/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer not-a-token\r\n\r\n",
      ...body,
    ]);
    // Authentication comes first on this endpoint (as under Next): its 401 shows the body was not needed.
    expect(result.text).toMatch(/^HTTP\/1\.1 401 /);
    const session = await passwordSession();
    const limited = await rawExchange(portOf(server.url), [
      `POST /api/bundle/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer ${session.accessToken}\r\n\r\n`,
      ...body,
    ]);
    expect(limited.text).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(limited.text).toMatch(/\r\nConnection: close\r\n/i);
    expect(limited.text.endsWith('{"error":"body: larger than 64 KiB"}')).toBe(true);
    expect(limited.closed).toBe(true);
  });
});

describe("bodies the lane has read", () => {
  it("reach the handler as sent: JSON, text/plain JSON and forms parse, bad UTF-8 and other types are refused", async () => {
    const session = await passwordSession();
    const post = (body: BodyInit, type: string) =>
      fetch(`${server.url}/api/bundle/`, { method: "POST", headers: { "Content-Type": type, Authorization: `Bearer ${session.accessToken}` }, body });
    const created = await post(JSON.stringify({ name: "Über bundle" }), "application/json");
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ name: "Über bundle" });
    expect((await post(JSON.stringify({ name: "Plain" }), "text/plain")).status).toBe(201);
    const badUtf8 = await post(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), "application/json");
    expect(badUtf8.status).toBe(400);
    expect(await badUtf8.json()).toEqual({ error: "body: not valid UTF-8" });
    const form = await post("name=Form", "application/x-www-form-urlencoded");
    expect(form.status).toBe(415);
    expect(await form.json()).toEqual({ error: "content type application/x-www-form-urlencoded is not supported; send application/json" });
    const token = await fetch(`${server.url}/api/connect/oauth2/token/`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: session.refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret! }),
    });
    expect(token.status).toBe(200);
    expect(await token.json()).toMatchObject({ token_type: "Bearer" });
  });
});

describe("a client that goes away", () => {
  it("mid-body leaves nothing behind: the next request is served", async () => {
    await new Promise<void>((done) => {
      const socket = connect(portOf(server.url), "127.0.0.1", () => {
        socket.write("POST /api/connect/oauth2/token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"grant_");
        setTimeout(() => {
          socket.destroy();
          done();
        }, 50);
      });
    });
    const response = await fetch(`${server.url}/api/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });
});

describe("the client address", () => {
  it("is the socket's: with TRUST_PROXY=0 a client's own X-Forwarded-For changes nothing", async () => {
    expect(env().trustProxy).toBe(false);
    const session = await passwordSession();
    const response = await fetch(`${server.url}/api/connect/oauth2/token/`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Forwarded-For": "203.0.113.66" },
      body: JSON.stringify({ grant_type: "refresh_token", refresh_token: session.refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret }),
    });
    expect(response.status).toBe(200);
    const events = await (await db()).auditEvent.findMany({ where: { type: "token.refreshed", userId: session.user.id } });
    expect(events.map((event) => event.ip)).toEqual(["127.0.0.1"]);
  });

  it("is appended to X-Forwarded-For as the last entry, whatever the client sent", () => {
    const req = { socket: { remoteAddress: "::ffff:192.0.2.4" }, headers: { "x-forwarded-for": "203.0.113.66" } };
    appendPeerAddress(req as never);
    expect(req.headers["x-forwarded-for"]).toBe("203.0.113.66, ::ffff:192.0.2.4");
    const bare = { socket: { remoteAddress: "192.0.2.5" }, headers: {} as Record<string, string> };
    appendPeerAddress(bare as never);
    expect(bare.headers["x-forwarded-for"]).toBe("192.0.2.5");
  });
});

describe("response headers on the wire", () => {
  let appDir = "";
  let lane: Server;

  beforeAll(async () => {
    appDir = mkdtempSync(join(process.env.TEST_SCRATCH_DIR!, "headers-"));
    mkdirSync(join(appDir, "api", "headers"), { recursive: true });
    writeFileSync(
      join(appDir, "api", "headers", "route.ts"),
      `import { json, setHeader } from "@/http/respond";
export function GET(request: Request) {
  if (new URL(request.url).searchParams.get("kind") === "plain") {
    const headers = new Headers([["Set-Cookie", "a=1"], ["Set-Cookie", "b=2"], ["X-Content-Type-Options", "nosniff"], ["Content-Type", "text/plain"]]);
    return new Response("plain", { headers });
  }
  const response = json({ ok: true }, 200, { "X-Frame-Options": "SAMEORIGIN", "Content-Length": "999", "Transfer-Encoding": "chunked", Vary: "Accept" });
  setHeader(response, "Access-Control-Allow-Origin", "*");
  setHeader(response, "Vary", "Origin", true);
  if (new URL(request.url).searchParams.get("kind") === "read") response.headers.get("vary"); // made into Headers
  return response;
}
`,
    );
    const routes = buildRouteTable(appDir);
    lane = createServer((req, res) => {
      const decision = decideLane(routes, pathOf(req.url));
      if (decision) void queueFastLane(req, res, decision, { origin: env().appUrl });
    });
    await new Promise<void>((done) => lane.listen(0, "127.0.0.1", done));
  });
  afterAll(async () => {
    await new Promise((done) => lane.close(done));
    rmSync(appDir, { recursive: true, force: true });
  });

  /** The header lines of one answer, as sent, without those Node adds (Date, Connection). */
  async function headerLines(query: string): Promise<string[]> {
    const { text } = await rawExchange((lane.address() as AddressInfo).port, [`GET /api/headers/?kind=${query} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
    const head = text.slice(0, text.indexOf("\r\n\r\n")).split("\r\n").slice(1);
    return head.filter((line) => !/^(date|connection):/i.test(line));
  }

  it("are the response's own, in Headers' order, framing headers replaced, the security headers it lacks added", async () => {
    const expected = [
      "access-control-allow-origin: *",
      "content-type: application/json; charset=utf-8",
      "vary: Accept, Origin",
      "x-frame-options: SAMEORIGIN",
      "X-Content-Type-Options: nosniff",
      "Referrer-Policy: same-origin",
      "Content-Security-Policy: frame-ancestors 'none'",
      "Content-Length: 11",
    ];
    expect(await headerLines("text")).toEqual(expected); // a TextResponse's lines, never made into Headers
    expect(await headerLines("read")).toEqual(expected); // the same response once its Headers were made
    expect(await headerLines("plain")).toEqual([
      "content-type: text/plain",
      "x-content-type-options: nosniff",
      "set-cookie: a=1",
      "set-cookie: b=2",
      "Referrer-Policy: same-origin",
      "X-Frame-Options: DENY",
      "Content-Security-Policy: frame-ancestors 'none'",
      "Content-Length: 5",
    ]);
  });
});

describe("after-response work", () => {
  let appDir = "";
  let lane: Server;
  const gate: { open?: () => void } = {};
  const log: string[] = [];

  beforeAll(async () => {
    appDir = mkdtempSync(join(process.env.TEST_SCRATCH_DIR!, "after-"));
    mkdirSync(join(appDir, "api", "later"), { recursive: true });
    writeFileSync(
      join(appDir, "api", "later", "route.ts"),
      `import { afterResponse } from "@/http/after-response";
export function GET() {
  const state = globalThis.__afterTest;
  afterResponse(async () => {
    state.log.push("task started");
    await new Promise((resolve) => (state.gate.open = resolve));
    state.log.push("task finished");
  });
  return Response.json({ queued: true });
}
`,
    );
    (globalThis as Record<string, unknown>).__afterTest = { log, gate };
    const routes = buildRouteTable(appDir);
    lane = createServer((req, res) => {
      const decision = decideLane(routes, pathOf(req.url));
      if (decision) void queueFastLane(req, res, decision, { origin: env().appUrl });
    });
    await new Promise<void>((done) => lane.listen(0, "127.0.0.1", done));
  });
  afterAll(async () => {
    await new Promise((done) => lane.close(done));
    rmSync(appDir, { recursive: true, force: true });
  });

  it("runs once the response has been written: the client has its answer while the task still waits", async () => {
    const response = await fetch(`http://127.0.0.1:${(lane.address() as AddressInfo).port}/api/later/`, { signal: AbortSignal.timeout(5_000) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ queued: true });
    for (let i = 0; i < 100 && !gate.open; i++) await new Promise((resolveWait) => setTimeout(resolveWait, 10));
    expect(log).toEqual(["task started"]);
    gate.open!();
    for (let i = 0; i < 100 && log.length < 2; i++) await new Promise((resolveWait) => setTimeout(resolveWait, 10));
    expect(log).toEqual(["task started", "task finished"]);
  });
});

describe("a client that goes away before its answer", () => {
  let appDir = "";
  let lane: Server;
  let port = 0;
  const state: { started?: () => void; release?: () => void; settled: string[] } = { settled: [] };

  beforeAll(async () => {
    appDir = mkdtempSync(join(process.env.TEST_SCRATCH_DIR!, "gone-"));
    mkdirSync(join(appDir, "api", "slow"), { recursive: true });
    writeFileSync(
      join(appDir, "api", "slow", "route.ts"),
      `export async function GET() {
  const state = globalThis.__goneTest;
  await new Promise((resolve) => { state.release = resolve; state.started(); });
  return Response.json({ late: true });
}
export async function POST(request) {
  return Response.json({ read: (await request.text()).length });
}
`,
    );
    (globalThis as Record<string, unknown>).__goneTest = state;
    const routes = buildRouteTable(appDir);
    lane = createServer((req, res) => {
      const decision = decideLane(routes, pathOf(req.url));
      if (!decision) return;
      // ?early: the client is gone before the request's turn comes (its socket destroyed as it is queued).
      if (req.url?.endsWith("?early")) req.socket.destroy();
      void queueFastLane(req, res, decision, { origin: env().appUrl }).then(() => state.settled.push(`${req.method} ${req.url}`));
    });
    await new Promise<void>((done) => lane.listen(0, "127.0.0.1", done));
    port = (lane.address() as AddressInfo).port;
  });
  afterAll(async () => {
    lane.closeAllConnections();
    await new Promise((done) => lane.close(done));
    rmSync(appDir, { recursive: true, force: true });
  });

  const waitFor = async (check: () => boolean) => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((resolveWait) => setTimeout(resolveWait, 10));
    return check();
  };

  it("while its handler runs: the lane is done with the request once the handler returns, with nothing to write", async () => {
    const started = new Promise<void>((resolveStarted) => (state.started = resolveStarted));
    const socket = connect(port, "127.0.0.1", () => socket.write("GET /api/slow HTTP/1.1\r\nHost: x\r\n\r\n"));
    socket.on("error", () => {});
    await started;
    socket.destroy();
    await waitFor(() => socket.destroyed);
    await new Promise((resolveWait) => setTimeout(resolveWait, 50)); // the server sees the connection close
    state.release!();
    expect(await waitFor(() => state.settled.includes("GET /api/slow"))).toBe(true);
  });

  it("before its turn: the lane lets it go unanswered, with or without a body to read", async () => {
    for (const request of ["GET /api/slow?early HTTP/1.1\r\nHost: x\r\n\r\n", "POST /api/slow?early HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"]) {
      state.started = () => state.release!();
      const result = await rawExchange(port, [request], 2_000);
      expect(result).toEqual({ text: "", closed: true });
    }
    expect(await waitFor(() => state.settled.includes("GET /api/slow?early") && state.settled.includes("POST /api/slow?early"))).toBe(true);
  });
});
