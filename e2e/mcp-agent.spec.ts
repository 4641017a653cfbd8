// An AI agent from nothing but the MCP server's URL (docs/rules/agents.md, docs/api.md#connecting-an-ai-agent):
// the official TypeScript SDK's client (auth() and its Streamable HTTP transport) against the production build
// started with REGISTRATION=open finds the protected resource metadata from the 401, then the authorization
// server's, registers itself (dynamically, or by a client ID metadata document the test serves:
// docs/rules/tokens.md#client-id-metadata-documents), sends a person to sign in and approve (in Chromium), gets
// a token for <APP_URL>/api/mcp and calls tools as that person; that token is refused by /api. The agent asks
// a bundle's owner for access with request_bundle_access, and the owner, in a browser of their own, finds the
// mail in /dev/mailbox, opens its link and accepts; the agent then sees the access (list_shared_with_me). A web
// page of another origin calls the server too (CORS, as Chromium enforces it).
import { expect, test, type Browser } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { e2eEnv, extraPort, metadataPort } from "./env";
import { approveInBrowser, CALLBACK, cli, linkIn, newUser, readMailbox, signIn, startCallbackServer, type User } from "./helpers";

// A server of its own (another configuration of the same build and database): registration open to anyone,
// and client ID metadata documents from this test's own http origin (tests only).
const port = Number(process.env.E2E_MCP_PORT ?? extraPort + 1);
const origin = `http://localhost:${port}`;
const documentPort = Number(process.env.E2E_MCP_METADATA_PORT ?? metadataPort + 1);
const DOCUMENT_URL = `http://127.0.0.1:${documentPort}/mcp-agent.json`;
let server: ChildProcess;
let stopCallbackServer: () => Promise<void>;
let documents: Server;
let documentFetches = 0;

test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
  // The agent's client ID metadata document: a public client whose redirect URI is the test's callback.
  documents = createServer((request, response) => {
    if (request.url !== "/mcp-agent.json") return void response.writeHead(404).end();
    documentFetches++;
    response.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=600" });
    response.end(JSON.stringify({ client_id: DOCUMENT_URL, client_name: "Metadata MCP agent", redirect_uris: [CALLBACK], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" }));
  });
  await new Promise<void>((resolve) => documents.listen(documentPort, "127.0.0.1", resolve));
  const env = { ...process.env, ...e2eEnv, PORT: String(port), APP_URL: origin, REGISTRATION: "open", CLIENT_ID_METADATA_INSECURE_ORIGIN: `http://127.0.0.1:${documentPort}` } as NodeJS.ProcessEnv;
  server = spawn("npm", ["run", "-s", "start"], { env, detached: true, stdio: "ignore" });
  await expect.poll(async () => (await fetch(`${origin}/api/ready`).catch(() => null))?.status ?? 0, { timeout: 90_000 }).toBe(200);
});

test.afterAll(async () => {
  await stopCallbackServer();
  await new Promise((resolve) => documents.close(resolve));
  if (server.exitCode === null && server.signalCode === null) {
    const ended = new Promise((done) => server.once("exit", done));
    process.kill(-server.pid!, "SIGTERM");
    const killer = setTimeout(() => process.kill(-server.pid!, "SIGKILL"), 10_000);
    await ended;
    clearTimeout(killer);
  }
});

/** What the SDK keeps between steps: in memory, as a command-line agent would in a file. */
function memoryProvider(client?: OAuthClientInformationMixed) {
  const saved: { client?: OAuthClientInformationMixed; tokens?: OAuthTokens; verifier?: string; authorizationUrl?: URL } = { client };
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

type Tools = { callTool: Client["callTool"] };
const call = async (client: Tools, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;

/** A person who owns a bundle (made with the admin CLI), for the agent to ask. */
function ownerWithBundle(bundleName: string) {
  const owner = newUser("Bundle Owner");
  const bundle = cli<{ id: number; resource_uri: string }>("bundle:create", "--owner", owner.email, "--name", bundleName);
  return { owner, bundle };
}

/** The agent asks the owner to let its person in: a pending request, and no result holds the redeem token. */
async function askOwner(client: Tools, bundle: { id: number; resource_uri: string }, owner: User) {
  const asked = await call(client, "request_bundle_access", { bundle: bundle.resource_uri, user_target: owner.email });
  expect(asked.isError, JSON.stringify(asked.content)).toBeFalsy();
  expect(asked.structuredContent).toMatchObject({ status: "pending" });
  expect(JSON.stringify(asked)).not.toContain("token=");
  return asked.structuredContent as { id: number };
}

/**
 * The owner, in a browser of their own, signs in on the MCP server's origin, finds the mail the agent's request
 * sent (the development mailbox: no mail provider in the e2e environment), opens its link and accepts.
 */
async function ownerAccepts(browser: Browser, owner: User, requesterName: string, bundleName: string) {
  const context = await browser.newContext({ baseURL: origin });
  const page = await context.newPage();
  await signIn(page, owner.email, owner.password);
  await expect(page.getByText("Signed in as")).toBeVisible();
  const mail = await readMailbox(page, owner.email, `${requesterName} asks you for access to your bundle “${bundleName}”`);
  const link = linkIn(mail, "/redeem?token=");
  expect(new URL(link).origin).toBe(origin);
  await page.goto(link);
  await expect(page.getByRole("button", { name: "Accept" })).toBeEnabled();
  await page.getByRole("button", { name: "Accept" }).click();
  await expect(page.getByText("Accepted")).toBeVisible();
  await context.close();
}

/** What the agent sees once the owner accepted: the request redeemed, the bundle shared with its person. */
async function expectAccessShows(client: Tools, requestId: number, bundleId: number) {
  const requests = await call(client, "list_permission_requests");
  const listed = (requests.structuredContent as { objects: Array<{ id: number; status: string }> }).objects;
  expect(listed.find((request) => request.id === requestId)?.status).toBe("redeemed"); // accepted by the owner
  const shared = await call(client, "list_shared_with_me");
  expect(shared.structuredContent).toMatchObject({ meta: { total_count: 1 }, objects: [{ bundle: { id: bundleId } }] });
}

test("the SDK's client given only <APP_URL>/api/mcp registers, has a person sign in, and calls tools as that person; the owner it asks accepts by mail", async ({ page, browser }) => {
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

  // 4. The agent asks another person's bundle for its person; the owner accepts by the mailed link.
  const { owner, bundle } = ownerWithBundle("Owner's album");
  const request = await askOwner(client, bundle, owner);
  await ownerAccepts(browser, owner, "Agent Owner", "Owner's album");
  await expectAccessShows(client, request.id, bundle.id);
  await client.close();

  // 5. The token is the MCP server's: the API refuses it.
  const api = await fetch(`${origin}/api/bundle/`, { headers: { authorization: `Bearer ${saved.tokens!.access_token}` } });
  expect(api.status).toBe(401);
  expect(await api.json()).toEqual({ error: "this token is for another resource" });
});

test("the SDK's client named by its client ID metadata document: a person signs in from the authorization request, the agent lists and calls tools, and the owner it asks accepts by mail", async ({ page, browser }) => {
  const person = newUser("Document Agent User");
  const { owner, bundle } = ownerWithBundle("Family recipes");
  const url = new URL(`${origin}/api/mcp`);
  // The server says it takes metadata documents. The SDK takes a clientMetadataUrl only over https, so the
  // agent starts with the document's URL as its client_id, as the SDK stores it once it has chosen one
  // (the server fetches the document from the test's http origin, allowed by CLIENT_ID_METADATA_INSECURE_ORIGIN).
  const metadata = await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json();
  expect(metadata).toMatchObject({ client_id_metadata_document_supported: true });
  const { provider, saved } = memoryProvider({ client_id: DOCUMENT_URL });
  const fetchesBefore = documentFetches;

  // 1. Refused (401); the SDK discovers and sends the person to the authorization endpoint with the URL as client_id.
  const first = new Client({ name: "e2e-document-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  const authorizationUrl = saved.authorizationUrl!;
  expect(authorizationUrl.origin).toBe(origin);
  expect(authorizationUrl.searchParams.get("client_id")).toBe(DOCUMENT_URL);
  expect(authorizationUrl.searchParams.get("resource")).toBe(`${origin}/api/mcp`);

  // 2. Signed out, the person is asked to sign in for the document's host, then to approve it, marked unverified.
  await page.goto(authorizationUrl.toString());
  await expect(page.getByText(`Sign in to continue to 127.0.0.1:${documentPort}`)).toBeVisible();
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: `Allow 127.0.0.1:${documentPort} to access your account?` })).toBeVisible();
  await expect(page.getByText(/Unverified app: it describes itself in a document on 127\.0\.0\.1:\d+/)).toBeVisible();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect.poll(() => page.url()).toContain(CALLBACK);
  const code = new URL(page.url()).searchParams.get("code");
  expect(code, page.url()).not.toBeNull();
  await transport.finishAuth(code!); // a public client: the code and its PKCE verifier, no secret
  expect(saved.tokens?.access_token).toBeTruthy();
  expect(documentFetches).toBeGreaterThan(fetchesBefore);

  // 3. The tools, as the person.
  const client = new Client({ name: "e2e-document-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual(["create_bundle", "list_bundles", "list_permission_requests", "list_shared_with_me", "request_bundle_access", "whoami", "withdraw_permission_request"]);
  expect((await call(client, "whoami")).structuredContent).toMatchObject({ id: person.id, email: person.email });

  // 4. The agent asks the owner; the owner accepts in a browser of their own; the agent sees the access.
  const request = await askOwner(client, bundle, owner);
  await ownerAccepts(browser, owner, "Document Agent User", "Family recipes");
  await expectAccessShows(client, request.id, bundle.id);
  await client.close();

  // 5. The same server from a web page of another origin, with Chromium enforcing CORS
  // (docs/rules/agents.md#browser-clients): the page reads the 401's challenge, and calls a tool with the token.
  await page.goto(CALLBACK);
  const fromPage = await page.evaluate(
    async ({ mcp, token }) => {
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } });
      const refused = await fetch(mcp, { method: "POST", headers, body });
      const served = await fetch(mcp, { method: "POST", headers: { ...headers, authorization: `Bearer ${token}` }, body });
      return { refused: refused.status, challenge: refused.headers.get("www-authenticate"), served: served.status, answer: await served.json() };
    },
    { mcp: url.href, token: saved.tokens!.access_token },
  );
  expect(fromPage).toMatchObject({ refused: 401, served: 200, answer: { result: { structuredContent: { id: person.id, email: person.email } } } });
  expect(fromPage.challenge).toContain(`resource_metadata="${origin}/.well-known/oauth-protected-resource/api/mcp"`);
});
