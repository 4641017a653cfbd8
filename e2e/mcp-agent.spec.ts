// An AI agent from nothing but the MCP server's URL (docs/rules/agents.md, docs/api.md#connecting-an-ai-agent):
// the official TypeScript SDK's client (auth() and its Streamable HTTP transport) against the production build
// started with REGISTRATION=open finds the protected resource metadata from the 401, then the authorization
// server's, registers itself dynamically, sends a person to sign in and approve (in Chromium), gets a token
// for <APP_URL>/api/mcp and calls tools as that person; that token is refused by /api.
import { expect, test } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { e2eEnv, extraPort } from "./env";
import { approveInBrowser, CALLBACK, newUser, signIn, startCallbackServer } from "./helpers";

// A server of its own (another configuration of the same build and database): registration open to anyone.
const port = Number(process.env.E2E_MCP_PORT ?? extraPort + 1);
const origin = `http://localhost:${port}`;
let server: ChildProcess;
let stopCallbackServer: () => Promise<void>;

test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
  const env = { ...process.env, ...e2eEnv, PORT: String(port), APP_URL: origin, REGISTRATION: "open" } as NodeJS.ProcessEnv;
  server = spawn("npm", ["run", "-s", "start"], { env, detached: true, stdio: "ignore" });
  await expect.poll(async () => (await fetch(`${origin}/api/ready`).catch(() => null))?.status ?? 0, { timeout: 90_000 }).toBe(200);
});

test.afterAll(async () => {
  await stopCallbackServer();
  if (server.exitCode === null && server.signalCode === null) {
    const ended = new Promise((done) => server.once("exit", done));
    process.kill(-server.pid!, "SIGTERM");
    const killer = setTimeout(() => process.kill(-server.pid!, "SIGKILL"), 10_000);
    await ended;
    clearTimeout(killer);
  }
});

/** What the SDK keeps between steps: in memory, as a command-line agent would in a file. */
function memoryProvider() {
  const saved: { client?: OAuthClientInformationMixed; tokens?: OAuthTokens; verifier?: string; authorizationUrl?: URL } = {};
  const provider: OAuthClientProvider = {
    redirectUrl: CALLBACK,
    clientMetadata: {
      client_name: "E2E agent",
      redirect_uris: [CALLBACK],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
    clientInformation: () => saved.client,
    saveClientInformation: (client) => void (saved.client = client),
    tokens: () => saved.tokens,
    saveTokens: (tokens) => void (saved.tokens = tokens),
    // The service requires `state` on every authorization request (docs/rules/tokens.md#authorization-endpoint).
    state: () => randomUUID(),
    redirectToAuthorization: (url) => void (saved.authorizationUrl = url),
    saveCodeVerifier: (verifier) => void (saved.verifier = verifier),
    codeVerifier: () => saved.verifier!,
  };
  return { provider, saved };
}

test("the SDK's client given only <APP_URL>/api/mcp registers, has a person sign in, and calls tools as that person", async ({ page }) => {
  const person = newUser("Agent Owner");
  const url = new URL(`${origin}/api/mcp`);
  const { provider, saved } = memoryProvider();

  // 1. The first connection is refused (401); the SDK discovers, registers and asks for the person's approval.
  const first = new Client({ name: "e2e-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(saved.client?.client_id).toBeTruthy();
  const authorizationUrl = saved.authorizationUrl!;
  expect(authorizationUrl.origin).toBe(origin);
  expect(authorizationUrl.searchParams.get("resource")).toBe(`${origin}/api/mcp`);
  expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");

  // 2. The person signs in and approves in the browser; the code arrives at the agent's redirect URI.
  await signIn(page, person.email, person.password, `${origin}/login`);
  await expect(page.getByText("Signed in as")).toBeVisible();
  const callback = await approveInBrowser(page, authorizationUrl);
  const code = callback.searchParams.get("code");
  expect(code, callback.href).not.toBeNull();
  await transport.finishAuth(code!);
  expect(saved.tokens?.access_token).toBeTruthy();

  // 3. Connected with the token: the tools act as the person.
  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  const me = (await client.callTool({ name: "whoami", arguments: {} })) as CallToolResult;
  expect(me.structuredContent).toMatchObject({ id: person.id, name: "Agent Owner", email: person.email });
  const created = (await client.callTool({ name: "create_bundle", arguments: { name: "Made by an agent" } })) as CallToolResult;
  expect(created.isError).toBeFalsy();
  const listed = (await client.callTool({ name: "list_bundles", arguments: {} })) as CallToolResult;
  expect(listed.structuredContent).toMatchObject({ meta: { total_count: 1 }, objects: [{ name: "Made by an agent" }] });
  await client.close();

  // 4. The token is the MCP server's: the API refuses it.
  const api = await fetch(`${origin}/api/bundle/`, { headers: { authorization: `Bearer ${saved.tokens!.access_token}` } });
  expect(api.status).toBe(401);
  expect(await api.json()).toEqual({ error: "this token is for another resource" });
});
