// docs/rules/endpoints.md#status-codes on every route of the fast lane's table (app/api/**/route.ts and
// app/.well-known/**/route.ts, next-auth's aside): a method a path does not have is 405 with `Allow` and a
// JSON error, and OPTIONS lists the methods. Checked twice: through the module's own exports, which is how
// `next dev` and Next call a route (a method the module does not export would get Next's empty 405 without
// `Allow`), and through the fast lane's dispatcher, which `npm start` runs.
import { describe, expect, it } from "vitest";
import { dispatch } from "@/server/dispatch";
import { buildRouteTable, type RouteModule } from "@/server/routes";
import { BASE } from "@/testing/app";

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"] as const;
type Handler = (request: Request, context: { params: Promise<Record<string, string | string[]>> }) => Promise<Response> | Response;

const table = buildRouteTable();

/** A concrete path for a pattern: every [param] gets a value that is valid in shape, e.g. /api/user/1. */
function samplePath(pattern: string): { path: string; params: Record<string, string | string[]> } {
  const params: Record<string, string | string[]> = {};
  const path = pattern.replace(/\[(\.\.\.)?([^\]]+)\]/g, (_, rest: string | undefined, name: string) => {
    params[name] = rest ? ["x"] : "1";
    return rest ? "x" : "1";
  });
  return { path: path + "/", params };
}

const routes = table.routes.filter((route) => route.pattern !== "/api/[...rest]");

describe("every /api route answers a method it does not have with 405, Allow and JSON", () => {
  it("covers the routes docs/api.md names, health and ready among them", () => {
    const patterns = routes.map((route) => route.pattern);
    for (const expected of ["/api/health", "/api/ready", "/api/bundle", "/api/connect/oauth2/token", "/.well-known/oauth-authorization-server"]) {
      expect(patterns).toContain(expected);
    }
  });

  it.each(routes.map((route) => [route.pattern, route] as const))("%s", async (_pattern, route) => {
    const mod = (await route.load()) as RouteModule;
    const { path, params } = samplePath(route.pattern);
    const context = () => ({ params: Promise.resolve(params) });

    // As Next calls it: every method is exported, so that Next never answers one itself.
    for (const method of [...METHODS, "OPTIONS"]) expect(typeof mod[method], `${route.pattern} exports ${method}`).toBe("function");
    const options = await (mod.OPTIONS as Handler)(new Request(BASE + path, { method: "OPTIONS" }), context());
    expect(options.status).toBe(204);
    const allow = new Set((options.headers.get("allow") ?? "").split(/,\s*/));
    expect(allow.has("OPTIONS")).toBe(true);
    const missing = METHODS.filter((method) => !allow.has(method));
    expect(missing.length, `${route.pattern} lacks some method`).toBeGreaterThan(0);

    for (const method of missing) {
      for (const [via, response] of [
        ["module", await (mod[method] as Handler)(new Request(BASE + path, { method }), context())],
        ["fast lane", await dispatch(new Request(BASE + path, { method }), table)],
      ] as const) {
        expect(response.status, `${method} ${path} via ${via}`).toBe(405);
        expect(new Set((response.headers.get("allow") ?? "").split(/,\s*/)), `${method} ${path} via ${via}`).toEqual(allow);
        expect(response.headers.get("content-type")).toMatch(/^application\/json/);
        const body = (await response.json()) as { error?: unknown };
        expect(typeof body.error).toBe("string");
      }
    }
  });

  it("health and ready: GET only", async () => {
    for (const path of ["/api/health", "/api/ready"]) {
      const put = await dispatch(new Request(BASE + path, { method: "PUT" }), table);
      expect(put.status).toBe(405);
      expect(put.headers.get("allow")?.split(/,\s*/).sort()).toEqual(["GET", "HEAD", "OPTIONS"]);
      expect(await put.json()).toEqual({ error: "method not allowed" });
    }
  });
});
