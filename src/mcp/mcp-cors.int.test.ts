// CORS for browser-based MCP clients (docs/rules/agents.md#browser-clients, docs/rules/endpoints.md#cors), on a
// real socket through the production listener (src/testing/app.ts startServer()): the preflight of /api/mcp
// allows the transport's headers, answers expose WWW-Authenticate (the 401's resource_metadata, the step-up's
// scope) and Mcp-Session-Id, a cookie-authenticated request gets none of it, and /api's own CORS is unchanged.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE, call, startServer } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const ORIGIN = "https://agent-in-a-browser.example";
const MCP_HEADERS = "Authorization, Content-Type, DPoP, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID";
const MCP_EXPOSED = "WWW-Authenticate, Location, Retry-After, Allow, Mcp-Session-Id";

let server: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

const corsOf = (response: Response) => Object.fromEntries([...response.headers].filter(([name]) => name.startsWith("access-control") || name === "vary"));

const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "browser-agent", version: "1" } } };
const post = (headers: Record<string, string>) =>
  fetch(`${server.url}/api/mcp`, {
    method: "POST",
    headers: { origin: ORIGIN, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25", ...headers },
    body: JSON.stringify(initialize),
  });

async function mcpToken() {
  const user = await makeUser();
  const client = await makeClient({ ownerId: user.id });
  const res = await call("POST", "/api/connect/oauth2/token/", {
    body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password, scope: "readonly", resource: `${BASE}/api/mcp` },
  });
  expect(res.status, res.text).toBe(200);
  return { user, token: res.json.access_token as string };
}

describe("CORS of /api/mcp", () => {
  it("answers a browser's preflight allowing Authorization, Content-Type and the transport's headers", async () => {
    const preflight = await fetch(`${server.url}/api/mcp`, {
      method: "OPTIONS",
      headers: { origin: ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id" },
    });
    expect(preflight.status).toBe(204);
    expect(corsOf(preflight)).toEqual({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "POST, OPTIONS",
      "access-control-allow-headers": MCP_HEADERS,
      "access-control-expose-headers": MCP_EXPOSED,
      "access-control-max-age": "600",
      vary: "Origin",
    });
  });

  it("exposes WWW-Authenticate on the 401 (so a browser client finds the resource metadata) and Mcp-Session-Id", async () => {
    const refused = await post({});
    expect(refused.status).toBe(401);
    expect(corsOf(refused)).toEqual({ "access-control-allow-origin": "*", "access-control-expose-headers": MCP_EXPOSED, vary: "Origin" });
    expect(refused.headers.get("www-authenticate")).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/api/mcp"`);

    const { token } = await mcpToken();
    const served = await post({ authorization: `Bearer ${token}` });
    expect(served.status).toBe(200);
    expect(corsOf(served)).toEqual({ "access-control-allow-origin": "*", "access-control-expose-headers": MCP_EXPOSED, vary: "Origin" });
  });

  it("gives a request that a session cookie would authenticate no CORS headers, as on /api", async () => {
    const { user } = await mcpToken();
    const withCookie = await post({ cookie: await sessionCookie(user) });
    expect(withCookie.status).toBe(401);
    expect(withCookie.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("leaves /api's CORS as it is: the MCP transport's headers are /api/mcp's only", async () => {
    const preflight = await fetch(`${server.url}/api/bundle/`, { method: "OPTIONS", headers: { origin: ORIGIN, "access-control-request-method": "POST" } });
    expect(preflight.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type, DPoP");
    expect(preflight.headers.get("access-control-expose-headers")).toBe("WWW-Authenticate, Location, Retry-After, Allow");
  });
});
