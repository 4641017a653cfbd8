// The fast lane's route table and dispatcher against an app directory of their own (route files written for
// the test), and the production table against the real app/.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispatch } from "@/server/dispatch";
import { decideLane } from "@/server/fast-lane";
import { buildRouteTable, matchRoute, MalformedPath, type RouteTable } from "@/server/routes";

let appDir = "";
let table: RouteTable;

const ECHO = (pattern: string) => `
export async function GET(request, context) {
  return Response.json({ pattern: ${JSON.stringify(pattern)}, params: await context.params });
}
`;

const FILES: Record<string, string> = {
  "api/a/route.ts": ECHO("/api/a") + `export function POST() { return new Response("posted", { status: 201 }); }\n`,
  "api/a/[id]/route.ts": ECHO("/api/a/[id]"),
  "api/a/fixed/route.ts": ECHO("/api/a/fixed"),
  "api/[...rest]/route.ts": ECHO("/api/[...rest]"),
  "api/(group)/grouped/route.ts": ECHO("/api/grouped"),
  "api/_private/route.ts": ECHO("private"),
  "api/opt/[[...slug]]/route.ts": ECHO("/api/opt/[[...slug]]"),
  "api/auth/[...nextauth]/route.ts": ECHO("next-auth"),
  "api/throws/route.ts": `export function GET() { throw new Error("boom /api/oauth2token/secret-token-value/"); }\n`,
  ".well-known/thing/route.ts": ECHO("/.well-known/thing"),
  "pages/route.ts": ECHO("pages"),
};

beforeAll(() => {
  appDir = mkdtempSync(join(process.env.TEST_SCRATCH_DIR!, "routes-"));
  for (const [file, source] of Object.entries(FILES)) {
    mkdirSync(dirname(join(appDir, file)), { recursive: true });
    writeFileSync(join(appDir, file), source);
  }
  table = buildRouteTable(appDir);
});

afterAll(() => rmSync(appDir, { recursive: true, force: true }));

async function get(path: string, method = "GET") {
  const response = await dispatch(new Request(`http://localhost:3000${path}`, { method }), table);
  const text = await response.text();
  const json = text && response.headers.get("content-type")?.includes("json") ? (JSON.parse(text) as Record<string, unknown>) : null;
  return { status: response.status, headers: response.headers, text, json };
}

describe("the route table", () => {
  it("matches like the app router: static, then [param], then [...catchAll], then [[...optional]]", async () => {
    expect((await get("/api/a")).json).toEqual({ pattern: "/api/a", params: {} });
    expect((await get("/api/a/fixed/")).json).toEqual({ pattern: "/api/a/fixed", params: {} });
    expect((await get("/api/a/7")).json).toEqual({ pattern: "/api/a/[id]", params: { id: "7" } });
    expect((await get("/api/a/7/more/")).json).toEqual({ pattern: "/api/[...rest]", params: { rest: ["a", "7", "more"] } });
    expect((await get("/api/opt")).json).toEqual({ pattern: "/api/opt/[[...slug]]", params: {} });
    expect((await get("/api/opt/x/y")).json).toEqual({ pattern: "/api/opt/[[...slug]]", params: { slug: ["x", "y"] } });
  });

  it("answers both trailing-slash forms and decodes parameters, never splitting on an encoded slash", async () => {
    expect((await get("/api/a/")).json).toEqual({ pattern: "/api/a", params: {} });
    expect((await get("/api/a/%41%20b")).json).toEqual({ pattern: "/api/a/[id]", params: { id: "A b" } });
    expect((await get("/api/a%2Ffixed")).json).toEqual({ pattern: "/api/[...rest]", params: { rest: ["a/fixed"] } });
    expect(() => matchRoute(table, "/api/a/%E0%A4%A")).toThrow(MalformedPath);
    const malformed = await get("/api/a/%E0%A4%A");
    expect(malformed.status).toBe(400);
    expect(malformed.json).toEqual({ error: "malformed path" });
  });

  it("leaves out route groups' names, private folders, next-auth's routes and anything outside /api and /.well-known", async () => {
    expect((await get("/api/grouped")).json).toEqual({ pattern: "/api/grouped", params: {} });
    expect((await get("/api/_private")).json).toEqual({ pattern: "/api/[...rest]", params: { rest: ["_private"] } });
    expect(table.routes.map((route) => route.pattern).sort()).toEqual(
      ["/.well-known/thing", "/api/[...rest]", "/api/a", "/api/a/[id]", "/api/a/fixed", "/api/grouped", "/api/opt/[[...slug]]", "/api/throws"].sort(),
    );
  });

  it("sends /api/auth/*, pages and unknown /.well-known paths to Next, everything else under /api to the fast lane", () => {
    expect(decideLane(table, "/api/auth/session")).toBeNull();
    expect(decideLane(table, "/api/auth")).toBeNull();
    expect(decideLane(table, "/login")).toBeNull();
    expect(decideLane(table, "/_next/static/chunk.js")).toBeNull();
    expect(decideLane(table, "/.well-known/other")).toBeNull();
    expect(decideLane(table, "/.well-known/thing")?.match?.route.pattern).toBe("/.well-known/thing");
    expect(decideLane(table, "/api/authority")?.match?.route.pattern).toBe("/api/[...rest]");
    expect(decideLane(table, "/api")).toEqual({ match: null, malformed: false });
    expect(decideLane(table, "/api/%E0%A4%A")).toEqual({ match: null, malformed: true });
  });
});

describe("the dispatcher", () => {
  it("answers HEAD with the GET handler's status and headers, without a body", async () => {
    const head = await get("/api/a/", "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("application/json");
    expect(head.text).toBe("");
  });

  it("answers OPTIONS for a module without one with 204 and Allow, as Next does, and a missing method with a JSON 405", async () => {
    const options = await get("/api/a", "OPTIONS");
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("GET, HEAD, OPTIONS, POST");
    const put = await get("/api/a", "PUT");
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, OPTIONS, POST");
    expect(put.json).toEqual({ error: "method not allowed" });
    expect(await get("/api/a", "POST")).toMatchObject({ status: 201, text: "posted" });
  });

  it("turns a handler's failure into a JSON 500 with a request id", async () => {
    const failed = await get("/api/throws");
    expect(failed.status).toBe(500);
    expect(failed.json).toEqual({ error: "server_error" });
    expect(failed.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("the production table", () => {
  it("holds every route file under app/api and app/.well-known except next-auth's, and nothing else", () => {
    const onDisk = (readdirSync(resolve("app"), { recursive: true }) as string[])
      .filter((file) => /(^|[\\/])route\.ts$/.test(file))
      .map((file) => "/" + file.split(sep).slice(0, -1).join("/"))
      .filter((pattern) => /^\/(api|\.well-known)(\/|$)/.test(pattern) && !pattern.startsWith("/api/auth/"));
    const production = buildRouteTable();
    expect(production.routes.map((route) => route.pattern).sort()).toEqual(onDisk.sort());
    expect(onDisk).toContain("/api/user/[id]");
    expect(onDisk).toContain("/.well-known/oauth-authorization-server");
  });
});
