// Request targets (docs/rules/endpoints.md#request-targets) on a real socket: dot segments in any spelling and
// absolute-form targets naming another host are refused with a 400 JSON error before any routing
// (src/server/request-target.ts), so that nothing reaches /api except through the fast lane and its checks.
// The test server stands in for Next with a plain 404 "not served without Next": a request that gets it would
// have gone to Next.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "@/testing/app";
import { openRaw } from "@/testing/raw-socket";

let server: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Sends `head` (and `body`), and resolves with what the server wrote once it closed the connection. */
async function exchange(head: string, body = ""): Promise<string> {
  const connection = await openRaw(server.url);
  connection.write(head + body);
  await connection.whenClosed();
  return connection.text();
}

const get = (target: string, host = "localhost:3000") => exchange(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
const bodyOf = (text: string) => text.slice(text.indexOf("\r\n\r\n") + 4);

describe("dot segments", () => {
  it.each([
    "/api/auth/../user/1",
    "/api/auth/../user/1/",
    "/.well-known/../api/user/1",
    "/api/auth/%2e%2e/user/1",
    "/api/auth/%2E%2E/user/1",
    "/api/auth/.%2e/user/1",
    "/api/auth/%2e./user/1",
    "/api/./user/1",
    "/api/%2e/user/1",
    "/api/user/1/.",
    "/api/user/1/..",
    "/api/user/1/../2/",
    "/.well-known/./openid-configuration",
    "/.well-known/oauth-authorization-server/..",
    "/api/auth/..?x=1",
    "//api/auth/../user/1",
    "/settings/../api/user/1",
    "/signin/%2e%2e/api/user/1",
    "/about/./",
  ])("%s: 400 JSON before any routing, connection closed", async (target) => {
    const text = await get(target);
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(text).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/i);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    expect(text).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
    expect(JSON.parse(bodyOf(text))).toEqual({ error: "malformed path: dot segments are not allowed" });
  });

  it("refuses a 20 MB body sent to such a path at once, without reading it", async () => {
    const connection = await openRaw(server.url);
    connection.write("POST /api/auth/../user/1 HTTP/1.1\r\nHost: localhost:3000\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n");
    connection.write("{".padEnd(64 * 1024, " ")); // the rest never comes: the answer must not wait for it
    await connection.whenClosed();
    expect(connection.text()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(bodyOf(connection.text()))).toEqual({ error: "malformed path: dot segments are not allowed" });
  });

  it("refuses a backslash and a fragment in the path (the URL parser reads a backslash as a slash)", async () => {
    for (const target of ["/api/auth\\..\\user/1", "/api/auth/x#/../../user/1"]) {
      const text = await get(target);
      expect(text, target).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(JSON.parse(bodyOf(text))).toEqual({ error: "malformed path" });
    }
  });

  it("leaves dots that are not whole segments, and dots in the query, alone", async () => {
    for (const target of ["/api/health?next=/../x", "/api/health/?a=.", "/.well-known/openid-configuration"]) {
      expect(await get(target), target).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    }
    expect(await get("/api/user/..x/")).toMatch(/^HTTP\/1\.1 401 /); // a segment named "..x" is an id like any other
  });

  it("reads percent-encoded unreserved characters as the characters (RFC 3986 6.2.2.2): /%61pi is /api", async () => {
    const text = await get("/%61pi/health");
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(bodyOf(text))).toEqual({ status: "ok" });
  });
});

describe("absolute-form request targets (RFC 9112 3.2.2)", () => {
  it("refuses one whose authority is not APP_URL's with 400 JSON", async () => {
    for (const target of ["http://other.example/api/health", "http://other.example/", "https://localhost:3001/api/health", "http://localhost.evil.example:3000/api/health"]) {
      const text = await get(target, "localhost:3000");
      expect(text, target).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(JSON.parse(bodyOf(text))).toEqual({ error: "request target names another host" });
    }
  });

  it("refuses userinfo, an authority that is not one, another scheme, and the asterisk form", async () => {
    for (const target of ["http://user@localhost:3000/api/health", "http://localhost:3000.evil.example/api/health", "ftp://localhost:3000/api/health", "*"]) {
      const text = await get(target);
      expect(text, target).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(JSON.parse(bodyOf(text))).toEqual({ error: "malformed request target" });
    }
  });

  it("serves one with APP_URL's authority through the fast lane, as its origin form", async () => {
    for (const target of ["http://localhost:3000/api/health", "HTTP://LOCALHOST:3000/api/health/", "http://localhost:3000/.well-known/openid-configuration"]) {
      const text = await get(target, "other.example");
      expect(text, target).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    }
    const refused = await get("http://localhost:3000/api/auth/../user/1");
    expect(JSON.parse(bodyOf(refused))).toEqual({ error: "malformed path: dot segments are not allowed" });
  });
});
