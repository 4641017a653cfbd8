// The tools' answers match the output schemas they list (MCP 2025-11-25, server/tools: a client validates
// structuredContent against the outputSchema of tools/list; docs/rules/agents.md#tools): the official SDK's
// client, which checks every result once it has listed the tools, calls each tool over a real socket.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE, call, startServer } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";

let server: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

async function token(user: { email: string; password: string; id: number }, resource: string) {
  const client = await makeClient({ ownerId: user.id });
  const res = await call("POST", "/api/connect/oauth2/token/", {
    body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password, scope: "readonly readwrite", resource },
  });
  expect(res.status, res.text).toBe(200);
  return res.json.access_token as string;
}

describe("output schemas", () => {
  it("every tool's structured content passes the SDK client's check against the schema tools/list gave it", async () => {
    const owner = await makeUser({ name: "Schema Owner" });
    const asker = await makeUser({ name: "Schema Asker" });
    const bundle = await call("POST", "/api/bundle/", { token: await token(owner, `${BASE}/api`), body: { name: "Checked" } });
    expect(bundle.status).toBe(201);
    const granted = await call("POST", "/api/bundle_permission/", { token: await token(owner, `${BASE}/api`), body: { bundle: bundle.json.id, user_allowed: asker.id } });
    expect(granted.status).toBe(201);

    const client = new Client({ name: "schema-checking-agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${await token(asker, `${BASE}/api/mcp`)}` } } }));
    const { tools } = await client.listTools(); // from here on the client validates every result
    expect(tools.every((tool) => tool.outputSchema !== undefined)).toBe(true);
    const tool = async (name: string, args: Record<string, unknown> = {}) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
      return result.structuredContent as Record<string, unknown>;
    };
    expect(await tool("whoami")).toMatchObject({ id: asker.id, name: "Schema Asker", email: asker.email });
    expect(await tool("create_bundle", { name: "Mine" })).toMatchObject({ name: "Mine" });
    expect(await tool("list_bundles")).toMatchObject({ meta: { total_count: 2 } });
    const other = await makeUser();
    const otherBundle = await call("POST", "/api/bundle/", { token: await token(other, `${BASE}/api`), body: { name: "Other's" } });
    const asked = await tool("request_bundle_access", { bundle: otherBundle.json.id, user_target: other.email });
    expect(asked).toMatchObject({ status: "pending" });
    expect(await tool("list_permission_requests")).toMatchObject({ meta: { total_count: 1 } });
    expect(await tool("list_shared_with_me")).toMatchObject({ meta: { total_count: 1 } });
    expect(await tool("withdraw_permission_request", { id: asked.id })).toEqual({ id: asked.id, withdrawn: true });
    await client.close();
  });
});
