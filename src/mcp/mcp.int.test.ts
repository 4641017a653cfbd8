// The Model Context Protocol server (docs/rules/agents.md) against the real route handlers and database, with
// the official SDK's client over a real socket (src/testing/app.ts startServer()): every tool as the token's
// user, the permission-request rules through the tools, the step-up 403 and the 401 challenges, and the
// audience binding of RFC 8707 both ways (docs/rules/agents.md#audience): which resources a token may be
// asked for, what it is stored with, refreshes and codes keeping it, introspection answering it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/db/client";
import { s256 } from "@/oauth/pkce";
import { CANNOT_GRANT } from "@/permission-requests/create-permission-request";
import { digest } from "@/secrets";
import { BASE, call, startServer } from "@/testing/app";
import { dpopKey, proof } from "@/testing/dpop";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const TOKEN = "/api/connect/oauth2/token/";
const MCP = `${BASE}/api/mcp`;
const API = `${BASE}/api`;
const MCP_METADATA = `${BASE}/.well-known/oauth-protected-resource/api/mcp`;
const RM = `resource_metadata="${MCP_METADATA}"`;
const REDIRECT = "https://agent.example.test/callback";
const VERIFIER = "mcp-verifier-".padEnd(64, "v");

let server: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

type Person = Awaited<ReturnType<typeof person>>;

/** A user, their password client and a token pair for `resource` (none: the token request names none). */
async function person(scope = "readonly readwrite", resource: string | null = MCP) {
  const user = await makeUser({ name: "Agent User" });
  const client = await makeClient({ ownerId: user.id });
  const tokens = await passwordTokens({ user, client }, scope, resource);
  return { user, client, ...tokens };
}

async function passwordTokens(s: { user: { email: string; password: string }; client: { client_id: string; client_secret?: string | null } }, scope: string, resource: string | null) {
  const res = await call("POST", TOKEN, {
    body: {
      grant_type: "password",
      client_id: s.client.client_id,
      client_secret: s.client.client_secret,
      username: s.user.email,
      password: s.user.password,
      scope,
      ...(resource ? { resource } : {}),
    },
  });
  expect(res.status, res.text).toBe(200);
  return { accessToken: res.json.access_token as string, refreshToken: res.json.refresh_token as string };
}

/** The SDK's client, connected to /api/mcp over the socket with `token`. */
async function agent(token: string) {
  const client = new Client({ name: "integration-test-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}

const tool = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;

/** A JSON-RPC request straight to the socket, without the SDK (to read the HTTP answer itself). */
const rpc = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/api/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25", ...headers },
    body: JSON.stringify(body),
  });
const callTool = (name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });

async function bundleOf(owner: Person, name = "Holiday photos") {
  const res = await call("POST", "/api/bundle/", { token: await apiToken(owner), body: { name } });
  expect(res.status).toBe(201);
  return res.json as { id: number; resource_uri: string };
}

/** A token for the API (not the MCP server) of the same person. */
async function apiToken(p: Person) {
  return (await passwordTokens(p, "readonly readwrite", API)).accessToken;
}

describe("the tools, as the token's user", () => {
  it("lists exactly the seven tools, each with input and output schemas, none that redeems", async () => {
    const p = await person();
    const client = await agent(p.accessToken);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ["create_bundle", "list_bundles", "list_permission_requests", "list_shared_with_me", "request_bundle_access", "whoami", "withdraw_permission_request"].sort(),
    );
    for (const t of tools) {
      expect(t.inputSchema.type).toBe("object");
      expect(t.outputSchema?.type).toBe("object");
    }
    expect(tools.find((t) => t.name === "request_bundle_access")!.inputSchema.properties).toHaveProperty("user_allowed");
    expect(client.getServerVersion()?.name).toBe("Bundle permissions");
    await client.close();
  });

  it("whoami, create_bundle and list_bundles act as the token's user, with the API's representations", async () => {
    const p = await person();
    const client = await agent(p.accessToken);
    const me = await tool(client, "whoami");
    expect(me.isError).toBeFalsy();
    expect(me.structuredContent).toEqual({ id: p.user.id, resource_uri: `/api/user/${p.user.id}/`, name: "Agent User", email: p.user.email });

    const created = await tool(client, "create_bundle", { name: "Agent's bundle" });
    expect(created.isError).toBeFalsy();
    const bundle = created.structuredContent as { id: number; resource_uri: string; name: string };
    expect(bundle).toMatchObject({ name: "Agent's bundle", resource_uri: `/api/bundle/${bundle.id}/` });
    const row = await (await db()).bundle.findUniqueOrThrow({ where: { id: bundle.id } });
    expect(row.ownerId).toBe(p.user.id);
    // What the API answers for the same list.
    const listed = await tool(client, "list_bundles");
    const viaApi = await call("GET", "/api/bundle/", { token: await apiToken(p) });
    expect(listed.structuredContent).toEqual(viaApi.json);
    expect((listed.structuredContent as { objects: unknown[] }).objects).toHaveLength(1);
    expect(JSON.parse((listed.content[0] as { text: string }).text)).toEqual(listed.structuredContent);
    const paged = await tool(client, "list_bundles", { limit: 1, offset: 1 });
    expect(paged.structuredContent).toMatchObject({ meta: { limit: 1, offset: 1, total_count: 1 }, objects: [] });
    await client.close();
  });

  it("request_bundle_access asks for the token's user by default, mails the owner, and no result holds the redeem token", async () => {
    const owner = await person();
    const asker = await person();
    const bundle = await bundleOf(owner);
    const client = await agent(asker.accessToken);
    const asked = await tool(client, "request_bundle_access", { bundle: bundle.resource_uri, user_target: owner.user.email });
    expect(asked.isError, JSON.stringify(asked.content)).toBeFalsy();
    const record = asked.structuredContent as { id: number; status: string; redeem_url: string };
    expect(record).toMatchObject({ resource_uri: `/api/bundle_permission_request/${record.id}/`, status: "pending", redeem_url: `${BASE}/redeem` });
    const row = await (await db()).permissionRequest.findUniqueOrThrow({ where: { id: record.id } });
    expect(row).toMatchObject({ requestedById: asker.user.id, userAllowedId: asker.user.id, userTargetId: owner.user.id, bundleId: bundle.id });
    // The owner's mail holds the link; neither the structured content nor the text of any result does.
    const mail = await (await db()).mailMessage.findFirstOrThrow({ where: { permissionRequestId: record.id } });
    const token = /token=([\w-]+)/.exec(mail.text)![1]!;
    expect(digest(token)).toBe(row.tokenDigest);
    const listed = await tool(client, "list_permission_requests");
    const ownerView = await tool(await agent(owner.accessToken), "list_permission_requests");
    for (const result of [asked, listed, ownerView]) expect(JSON.stringify(result)).not.toContain(token);
    expect((listed.structuredContent as { objects: Array<{ id: number }> }).objects.map((o) => o.id)).toEqual([record.id]);
    expect((ownerView.structuredContent as { objects: Array<{ id: number }> }).objects.map((o) => o.id)).toEqual([record.id]);

    // Someone else may be named as user_allowed, as on the API.
    const third = await makeUser();
    const forThird = await tool(client, "request_bundle_access", { bundle: bundle.id, user_target: `/api/user/${owner.user.id}/`, user_allowed: third.email });
    expect(forThird.isError).toBeFalsy();
    expect((await (await db()).permissionRequest.findUniqueOrThrow({ where: { id: (forThird.structuredContent as { id: number }).id } })).userAllowedId).toBe(third.id);

    const withdrawn = await tool(client, "withdraw_permission_request", { id: record.id });
    expect(withdrawn.structuredContent).toEqual({ id: record.id, withdrawn: true });
    expect((await (await db()).permissionRequest.findUniqueOrThrow({ where: { id: record.id } })).deletedAt).not.toBeNull();
    // The requester keeps seeing what became of it (docs/rules/permission-requests.md#listing-and-reading).
    const after = await tool(client, "list_permission_requests");
    const listedAfter = (after.structuredContent as { objects: Array<{ id: number; status: string }> }).objects;
    expect(listedAfter.find((o) => o.id === record.id)?.status).toBe("withdrawn");
  });

  it("list_shared_with_me lists the permissions that let the user into others' bundles, not those the user granted", async () => {
    const owner = await person();
    const reader = await person();
    const bundle = await bundleOf(owner, "Shared");
    const granted = await call("POST", "/api/bundle_permission/", { token: await apiToken(owner), body: { bundle: bundle.id, user_allowed: reader.user.id } });
    expect(granted.status).toBe(201);
    const readerView = await tool(await agent(reader.accessToken), "list_shared_with_me");
    expect(readerView.structuredContent).toMatchObject({ meta: { total_count: 1 }, objects: [{ id: granted.json.id, bundle: { id: bundle.id } }] });
    const ownerView = await tool(await agent(owner.accessToken), "list_shared_with_me");
    expect(ownerView.structuredContent).toMatchObject({ meta: { total_count: 0 }, objects: [] });
  });
});

describe("the permission-request rules through the tools", () => {
  it("answers the API's refusals as tool errors with the same status and error, and changes nothing", async () => {
    const owner = await person();
    const stranger = await person();
    const bundle = await bundleOf(owner);
    const client = await agent(stranger.accessToken);
    // A target who is not the owner: the same 400 as the API, which reveals nothing about who owns it.
    const wrongTarget = await tool(client, "request_bundle_access", { bundle: bundle.id, user_target: stranger.user.id });
    expect(wrongTarget.isError).toBe(true);
    expect(wrongTarget.structuredContent).toEqual({ status: 400, error: CANNOT_GRANT });
    const viaApi = await call("POST", "/api/bundle_permission_request/", {
      token: await apiToken(stranger),
      body: { bundle: bundle.id, user_target: stranger.user.id, user_allowed: stranger.user.id },
    });
    expect(viaApi.status).toBe(400);
    expect(viaApi.json).toEqual({ error: CANNOT_GRANT });
    const malformed = await tool(client, "request_bundle_access", { bundle: "not a bundle", user_target: owner.user.id });
    expect(malformed.structuredContent).toEqual({ status: 400, error: "bundle: must be a bundle URI (/api/bundle/<id>/) or id" });
    expect(await (await db()).permissionRequest.count({ where: { requestedById: stranger.user.id } })).toBe(0);

    // Another user's request: 404 to a stranger, as on the API; a blank bundle name is the API's 400.
    const asker = await person();
    const asked = await tool(await agent(asker.accessToken), "request_bundle_access", { bundle: bundle.id, user_target: owner.user.id });
    const id = (asked.structuredContent as { id: number }).id;
    const foreign = await tool(client, "withdraw_permission_request", { id });
    expect(foreign.structuredContent).toEqual({ status: 404, error: "no such permission request" });
    expect((await (await db()).permissionRequest.findUniqueOrThrow({ where: { id } })).deletedAt).toBeNull();
    const blank = await tool(client, "create_bundle", { name: "   " });
    expect(blank.isError).toBe(true);
    expect(blank.structuredContent).toMatchObject({ status: 400 });
    // Another user's bundles are not listed.
    const strangerBundles = await tool(client, "list_bundles");
    expect(strangerBundles.structuredContent).toMatchObject({ meta: { total_count: 0 } });
  });
});

describe("authorization: challenges and step-up", () => {
  it("answers 401 without a token, Bearer challenge first, then DPoP, each naming the MCP resource's metadata", async () => {
    const res = await rpc(callTool("whoami"));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="api", ${RM}, DPoP realm="api", algs="ES256 RS256", ${RM}`);
    const unknown = await rpc(callTool("whoami"), { authorization: "Bearer no-such-token" });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("www-authenticate")).toBe(`Bearer realm="api", ${RM}, error="invalid_token", DPoP realm="api", algs="ES256 RS256", ${RM}`);
    // Only POST: the server keeps no session and opens no stream.
    expect((await fetch(`${server.url}/api/mcp`)).status).toBe(405);
  });

  it("refuses a tool that changes something with a readonly token: HTTP 403 insufficient_scope (step-up), before anything runs", async () => {
    const p = await person("readonly");
    for (const [name, args] of [["create_bundle", { name: "x" }], ["request_bundle_access", { bundle: 1, user_target: 1 }], ["withdraw_permission_request", { id: 1 }]] as const) {
      const res = await rpc(callTool(name, args), { authorization: `Bearer ${p.accessToken}` });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: "this token lacks the readwrite scope" });
      expect(res.headers.get("www-authenticate")).toBe(
        `Bearer error="insufficient_scope", scope="readwrite", ${RM}, DPoP algs="ES256 RS256", error="insufficient_scope", scope="readwrite", ${RM}`,
      );
    }
    expect(await (await db()).bundle.count({ where: { ownerId: p.user.id } })).toBe(0);
    // What only reads works with readonly, through the SDK.
    const client = await agent(p.accessToken);
    expect((await tool(client, "whoami")).structuredContent).toMatchObject({ id: p.user.id });
    await expect(client.callTool({ name: "create_bundle", arguments: { name: "x" } })).rejects.toMatchObject({ code: 403 });
  });

  it("serves a DPoP-bound token sent as DPoP with a proof for /api/mcp, and refuses it as Bearer", async () => {
    const user = await makeUser();
    const pc = await makeClient({ ownerId: user.id });
    const key = await dpopKey();
    const issued = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: pc.client_id, client_secret: pc.client_secret, username: user.email, password: user.password, scope: "readonly", resource: MCP },
      headers: { dpop: await proof(key, { url: `${BASE}${TOKEN}` }) },
    });
    expect(issued.json.token_type).toBe("DPoP");
    const token = issued.json.access_token as string;
    const res = await rpc(callTool("whoami"), { authorization: `DPoP ${token}`, dpop: await proof(key, { url: MCP, method: "POST", accessToken: token }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: CallToolResult }).result.structuredContent).toMatchObject({ id: user.id });
    const asBearer = await rpc(callTool("whoami"), { authorization: `Bearer ${token}` });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get("www-authenticate")).toBe(`Bearer realm="api", ${RM}, DPoP realm="api", algs="ES256 RS256", ${RM}, error="invalid_token"`);
  });
});

describe("audience binding (RFC 8707)", () => {
  it("serves the MCP resource's metadata document, the API's unchanged", async () => {
    const res = await call("GET", "/.well-known/oauth-protected-resource/api/mcp");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      resource: MCP,
      authorization_servers: [BASE],
      scopes_supported: ["readonly", "readwrite"],
      bearer_methods_supported: ["header"],
      dpop_signing_alg_values_supported: ["ES256", "RS256"],
      dpop_bound_access_tokens_required: false,
      resource_name: "Bundle permissions MCP server",
      resource_documentation: `${BASE}/docs`,
    });
    expect((await call("GET", "/.well-known/oauth-protected-resource/api")).json).toMatchObject({ resource: API });
  });

  it("refuses an API token at /api/mcp and an MCP token on /api: 401 invalid_token, never passed through", async () => {
    const apiOnly = await person("readonly readwrite", null);
    const atMcp = await rpc(callTool("whoami"), { authorization: `Bearer ${apiOnly.accessToken}` });
    expect(atMcp.status).toBe(401);
    expect(await atMcp.json()).toEqual({ error: "this token is for another resource" });
    expect(atMcp.headers.get("www-authenticate")).toBe(`Bearer realm="api", ${RM}, error="invalid_token", DPoP realm="api", algs="ES256 RS256", ${RM}`);
    const explicitApi = await passwordTokens(apiOnly, "readonly", API);
    expect((await rpc(callTool("whoami"), { authorization: `Bearer ${explicitApi.accessToken}` })).status).toBe(401);

    const mcpOnly = await person();
    for (const path of [`/api/user/${mcpOnly.user.id}/`, "/api/bundle/", "/api/connect/oauth2/userinfo/"]) {
      const res = await call("GET", path, { token: mcpOnly.accessToken });
      expect(res.status, path).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/api"`);
    }
    expect((await call("POST", "/api/bundle/", { token: mcpOnly.accessToken, body: { name: "x" } })).status).toBe(401);
    expect(await (await db()).bundle.count({ where: { ownerId: mcpOnly.user.id } })).toBe(0);
  });

  it("stores the audience the token request names, answers it as aud, and refuses any other resource with invalid_target", async () => {
    const p = await person();
    const rows = await (await db()).accessToken.findMany({ where: { userId: p.user.id }, select: { audience: true } });
    expect(rows).toEqual([{ audience: "/api/mcp" }]);
    const introspect = (token: string) => call("POST", "/api/connect/oauth2/introspect/", { body: { token, client_id: p.client.client_id, client_secret: p.client.client_secret } });
    expect((await introspect(p.accessToken)).json).toMatchObject({ active: true, aud: MCP });
    expect((await introspect((await passwordTokens(p, "readonly", null)).accessToken)).json).toMatchObject({ aud: API });
    expect((await introspect((await passwordTokens(p, "readonly", API)).accessToken)).json).toMatchObject({ aud: API });
    for (const resource of [`${MCP}/`, `${BASE}/api/mcp/tools`, "https://other.example/api/mcp"]) {
      const res = await call("POST", TOKEN, { body: { grant_type: "password", client_id: p.client.client_id, client_secret: p.client.client_secret, username: p.user.email, password: p.user.password, scope: "readonly", resource } });
      expect(res.status, resource).toBe(400);
      expect(res.json).toEqual({ error: "invalid_target" });
    }
    expect(await (await db()).accessToken.count({ where: { userId: p.user.id } })).toBe(3); // the refused ones issued nothing
  });

  it("keeps the audience through refreshes; a refresh naming another resource is invalid_target and uses nothing up", async () => {
    const p = await person();
    const refresh = (token: string, extra: Record<string, string> = {}) =>
      call("POST", TOKEN, { body: { grant_type: "refresh_token", client_id: p.client.client_id, client_secret: p.client.client_secret, refresh_token: token, ...extra } });
    const other = await refresh(p.refreshToken, { resource: API });
    expect(other.status).toBe(400);
    expect(other.json).toEqual({ error: "invalid_target" });
    // Unconsumed: the same refresh token still works, and the new pair is for the MCP server (asked again, or not).
    const again = await refresh(p.refreshToken, { resource: MCP });
    expect(again.status).toBe(200);
    const plain = await refresh(again.json.refresh_token as string);
    expect(plain.status).toBe(200);
    const narrowed = await refresh(plain.json.refresh_token as string, { scope: "readonly" });
    expect(narrowed.status).toBe(200);
    for (const res of [again, plain, narrowed]) {
      const token = res.json.access_token as string;
      expect((await rpc(callTool("whoami"), { authorization: `Bearer ${token}` })).status).toBe(200);
      expect((await call("GET", "/api/bundle/", { token })).status).toBe(401);
    }
    const refreshRows = await (await db()).refreshToken.findMany({ where: { userId: p.user.id }, select: { audience: true } });
    expect(new Set(refreshRows.map((r) => r.audience))).toEqual(new Set(["/api/mcp"]));
  });

  it("gives a code the resource of its authorization request; the token request may repeat it, not name another", async () => {
    const user = await makeUser();
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", redirectUris: [REDIRECT] });
    const cookie = await sessionCookie(user);
    const code = async (resource: string | null) => {
      const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256(VERIFIER), code_challenge_method: "S256" });
      if (resource) query.set("resource", resource);
      const first = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie } });
      const sealed = new URL(first.headers.get("location")!, BASE).searchParams.get("request");
      if (sealed === null) return new URL(first.headers.get("location")!).searchParams.get("code")!;
      const decided = await call("POST", "/consent/decide", {
        headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie },
        raw: new URLSearchParams({ request: sealed, csrf: consentCsrfToken(user.id, sealed), decision: "approve" }).toString(),
      });
      return new URL(decided.headers.get("location")!).searchParams.get("code")!;
    };
    const exchange = (value: string, resource: string | null) =>
      call("POST", TOKEN, {
        body: { grant_type: "authorization_code", client_id: client.client_id, client_secret: client.client_secret, code: value, redirect_uri: REDIRECT, code_verifier: VERIFIER, ...(resource ? { resource } : {}) },
      });
    const forMcp = await code(MCP);
    const refused = await exchange(forMcp, API);
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ error: "invalid_target" });
    const granted = await exchange(forMcp, null); // not spent by the refusal
    expect(granted.status).toBe(200);
    expect((await rpc(callTool("whoami"), { authorization: `Bearer ${granted.json.access_token as string}` })).status).toBe(200);
    // A code whose request named none takes the token request's resource.
    const unnamed = await exchange(await code(null), MCP);
    expect(unnamed.status).toBe(200);
    expect((await rpc(callTool("whoami"), { authorization: `Bearer ${unnamed.json.access_token as string}` })).status).toBe(200);
    // Both at once on the authorization request: invalid_target.
    const both = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256(VERIFIER), code_challenge_method: "S256" });
    both.append("resource", MCP);
    both.append("resource", API);
    const bad = await call("GET", `/api/connect/oauth2/auth/?${both}`, { headers: { cookie } });
    expect(new URL(bad.headers.get("location")!).searchParams.get("error")).toBe("invalid_target");
  });
});
