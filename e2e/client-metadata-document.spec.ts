// A client named by its metadata document, in the browser against the production build
// (docs/rules/tokens.md#client-id-metadata-documents): the test serves the document from the one insecure origin
// the e2e environment allows; the person signs in, the consent page shows the document's host as the app and
// marks it unverified (checked with axe), and the app exchanges its code as a public client with PKCE. Its
// redirect URI is registered on loopback without a port and used with one (RFC 8252 7.3).
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { expect, test } from "@playwright/test";
import { metadataPort } from "./env";
import { CALLBACK, expectAt, newUsers, startCallbackServer } from "./helpers";
import { checkPage } from "./page-checks";

const CLIENT_ID = `http://127.0.0.1:${metadataPort}/agent.json`;
const REGISTERED_REDIRECT = new URL(CALLBACK).origin.replace(/:\d+$/, "") + new URL(CALLBACK).pathname;

let stopCallbackServer: () => Promise<void>;
let documents: Server;
let fetches = 0;
test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
  documents = createServer((request, response) => {
    if (request.url !== "/agent.json") return void response.writeHead(404).end();
    fetches++;
    response.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=600" });
    response.end(JSON.stringify({ client_id: CLIENT_ID, client_name: "Metadata Agent", redirect_uris: [REGISTERED_REDIRECT], token_endpoint_auth_method: "none" }));
  });
  await new Promise<void>((resolve) => documents.listen(metadataPort, "127.0.0.1", resolve));
});
test.afterAll(async () => {
  await stopCallbackServer();
  await new Promise((resolve) => documents.close(resolve));
});

test("sign in, consent naming the document's host as an unverified app, and tokens for the public client", async ({ page }) => {
  const [user] = await newUsers("Mia Metadata");
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const query = new URLSearchParams({ response_type: "code", client_id: CLIENT_ID, redirect_uri: CALLBACK, scope: "readonly", state: "st", code_challenge: challenge, code_challenge_method: "S256" });
  await page.goto(`/api/connect/oauth2/auth/?${query}`);
  await expect(page.getByText(`Sign in to continue to 127.0.0.1:${metadataPort}`)).toBeVisible();
  await expect(page.getByRole("button", { name: "Sign in" })).toBeEnabled();
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();

  await expect(page.getByRole("heading", { name: `Allow 127.0.0.1:${metadataPort} to access your account?` })).toBeVisible();
  await expect(page.getByText(`Calls itself “Metadata Agent”; described by a document on 127.0.0.1:${metadataPort}`)).toBeVisible();
  await expect(page.getByText(/Unverified app: it describes itself in a document on 127\.0\.0\.1:\d+/)).toBeVisible();
  await checkPage(page, "consent-metadata-document");
  await page.getByRole("button", { name: "Approve" }).click();
  await expectAt(page, CALLBACK);
  const code = new URL(page.url()).searchParams.get("code")!;

  const tokens = await page.request.post("/api/connect/oauth2/token/", {
    form: { grant_type: "authorization_code", code, redirect_uri: CALLBACK, code_verifier: verifier, client_id: CLIENT_ID },
  });
  expect(tokens.status()).toBe(200);
  expect(await tokens.json()).toMatchObject({ token_type: "Bearer", scope: "readonly" });
  // The document was fetched once and then read from the client's row (max-age=600).
  expect(fetches).toBe(1);
});
