// The browser flows of the authorization server in Debian's Chromium against the production build: sign-up
// and sign-in, the authorization code flow through consent with the exchange done by oauth4webapi, Deny,
// remembered consent, the implicit flow's fragment, the error page for a bad redirect URI, registering a
// client on /settings/clients and disconnecting an app on /settings/apps.
import { expect, test } from "@playwright/test";
import * as oauth from "oauth4webapi";
import { baseURL, callbackPort } from "./env";
import { CALLBACK, cli, expectAt, newUser, signIn, startCallbackServer } from "./helpers";

let stopCallbackServer: () => Promise<void>;
test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
});
test.afterAll(() => stopCallbackServer());

const insecure = { [oauth.allowInsecureRequests]: true };
const as: oauth.AuthorizationServer = {
  issuer: baseURL,
  authorization_endpoint: `${baseURL}/api/connect/oauth2/auth/`,
  token_endpoint: `${baseURL}/api/connect/oauth2/token/`,
  authorization_response_iss_parameter_supported: true,
};

type Registered = { client_id: string; client_secret: string | null; name: string };

function registerClient(grant: "authorization_code" | "implicit" | "password", name: string): Registered {
  const owner = newUser("Client Owner");
  const args = ["client:create", "--owner", owner.email, "--name", name, "--grant", grant];
  if (grant !== "password") args.push("--redirect-uri", CALLBACK);
  return cli<Registered>(...args);
}

test("sign-up creates an account, asks to check the mail, and the person can sign in", async ({ page }) => {
  const email = `signup-${Date.now()}@example.test`;
  await page.goto("/signup");
  await page.getByLabel("Name").fill("Sam Signup");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("a long password");
  await page.getByRole("button", { name: "Create account" }).click();
  // The same answer whether or not the address had an account
  // (docs/rules/accounts.md#sign-up-and-confirmation; e2e/security.spec.ts).
  await expect(page.getByText("Check your e-mail")).toBeVisible();
  await page.getByRole("link", { name: "Continue to sign in" }).click();
  await expect(page.getByLabel("Email")).toHaveValue(email);
  await page.getByLabel("Password").fill("a long password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText("Signed in as")).toBeVisible();
  await expect(page.getByText(email).first()).toBeVisible();
});

test("sign-in with a wrong password shows a message and keeps the e-mail; the right one signs in", async ({ page }) => {
  const user = newUser();
  await signIn(page, user.email, "wrong password");
  await expect(page.getByRole("main").getByRole("alert")).toHaveText(/do not match/);
  await expect(page.getByLabel("Email")).toHaveValue(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText("Signed in as")).toBeVisible();
});

test("authorization code flow: sign-in, consent, redirect with code, exchange with oauth4webapi; then consent is remembered", async ({ page, request }) => {
  const registered = registerClient("authorization_code", "Photo Printer");
  const user = newUser("Resource Owner");
  const client: oauth.Client = { client_id: registered.client_id };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: CALLBACK,
    scope: "readonly readwrite",
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  }).toString();

  // Signed out: the authorization request sends the user to sign in, then back to the same request.
  await page.goto(url.toString());
  await expectAt(page, "/login");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();

  await expect(page.getByRole("heading", { name: "Allow Photo Printer to access your account?" })).toBeVisible();
  await expect(page.getByText("registered by Client Owner")).toBeVisible();
  await expect(page.getByText(`localhost:${callbackPort}`)).toBeVisible();
  await expect(page.getByText("Also create bundles and permission requests")).toBeVisible();
  await page.getByRole("button", { name: "Approve" }).click();
  await expectAt(page, CALLBACK);

  const params = oauth.validateAuthResponse(as, client, new URL(page.url()), state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost(registered.client_secret!), params, CALLBACK, verifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  expect(tokens.scope).toBe("readonly readwrite");
  const me = await request.get(`/api/user/${user.id}/`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(me.status()).toBe(200);
  expect((await me.json()).email).toBe(user.email);

  // The same scopes again: no consent page, straight back with a new code.
  const again = new URL(url);
  again.searchParams.set("state", "second");
  again.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  await page.goto(again.toString());
  await expectAt(page, CALLBACK);
  expect(new URL(page.url()).searchParams.get("state")).toBe("second");
  // The code issued without asking again is a real one: it exchanges for tokens of the same user.
  const secondParams = oauth.validateAuthResponse(as, client, new URL(page.url()), "second");
  const second = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost(registered.client_secret!), secondParams, CALLBACK, verifier, insecure);
  const secondTokens = await oauth.processAuthorizationCodeResponse(as, client, second);
  expect(secondTokens.scope).toBe("readonly readwrite");
  const meAgain = await request.get(`/api/user/${user.id}/`, { headers: { authorization: `Bearer ${secondTokens.access_token}` } });
  expect((await meAgain.json()).email).toBe(user.email);
});

test("Deny sends the user back with access_denied and the state", async ({ page }) => {
  const registered = registerClient("authorization_code", "Nosy App");
  const user = newUser();
  await signIn(page, user.email);
  await expect(page.getByText("Signed in as")).toBeVisible();
  await page.goto(`/api/connect/oauth2/auth/?response_type=code&client_id=${registered.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&scope=readonly&state=deny-me`);
  await page.getByRole("button", { name: "Deny" }).click();
  await expectAt(page, CALLBACK);
  const url = new URL(page.url());
  expect(url.searchParams.get("error")).toBe("access_denied");
  expect(url.searchParams.get("state")).toBe("deny-me");
  expect(url.searchParams.get("code")).toBeNull();
});

test("implicit flow: the token arrives in the fragment and works as a bearer token", async ({ page, request }) => {
  const registered = registerClient("implicit", "Browser Widget");
  const user = newUser();
  await signIn(page, user.email);
  await expect(page.getByText("Signed in as")).toBeVisible();
  await page.goto(`/api/connect/oauth2/auth/?response_type=token&client_id=${registered.client_id}&scope=readonly&state=imp-1`);
  await page.getByRole("button", { name: "Approve" }).click();
  await expectAt(page, CALLBACK);
  // What a browser-only client does: read its own fragment.
  const fragment = await page.evaluate(() => Object.fromEntries(new URLSearchParams(window.location.hash.slice(1))));
  expect(fragment).toMatchObject({ token_type: "Bearer", state: "imp-1", expires_in: "3600", scope: "readonly" });
  expect(fragment.refresh_token).toBeUndefined();
  const me = await request.get(`/api/user/${user.id}/`, { headers: { authorization: `Bearer ${fragment.access_token}` } });
  expect(me.status()).toBe(200);
});

test("an unregistered redirect URI shows an error page and never redirects", async ({ page }) => {
  const registered = registerClient("authorization_code", "Careful App");
  const response = await page.goto(`/api/connect/oauth2/auth/?response_type=code&client_id=${registered.client_id}&redirect_uri=${encodeURIComponent("https://evil.example/steal")}&scope=readonly&state=x`);
  expect(response?.status()).toBe(400);
  await expect(page.getByRole("heading", { name: "Invalid redirect URI" })).toBeVisible();
  expect(page.url()).toContain("/api/connect/oauth2/auth/");
});

test("registering a client on /settings/clients shows its secret once, and the secret works", async ({ page, request }) => {
  const user = newUser();
  await signIn(page, user.email, user.password, "/login?callbackUrl=%2Fsettings%2Fclients");
  await expect(page.getByRole("heading", { name: "Your clients" })).toBeVisible();
  await page.getByLabel("Name").fill("My Script");
  await page.getByLabel("Grant type").selectOption("password");
  await page.getByRole("button", { name: "Register client" }).click();
  const clientId = (await page.getByTestId("new-client-id").textContent())!;
  const secret = (await page.getByTestId("new-client-secret").textContent())!;
  expect(secret.length).toBeGreaterThanOrEqual(43);
  await expect(page.getByRole("heading", { name: "My Script" })).toBeVisible();

  const token = await request.post("/api/connect/oauth2/token/", {
    data: { grant_type: "password", client_id: clientId, client_secret: secret, username: user.email, password: user.password },
  });
  expect(token.status()).toBe(200);

  // After a reload the secret is gone from the page for good.
  await page.reload();
  await expect(page.getByTestId("new-client-secret")).toHaveCount(0);
});

test("disconnecting an app on /settings/apps revokes its tokens", async ({ page, request }) => {
  const user = newUser();
  const registered = cli<Registered>("client:create", "--owner", user.email, "--name", "Nightly Backup", "--grant", "password");
  const token = await request.post("/api/connect/oauth2/token/", {
    data: { grant_type: "password", client_id: registered.client_id, client_secret: registered.client_secret, username: user.email, password: user.password, scope: "readonly" },
  });
  const { access_token } = await token.json();
  const bearer = { authorization: `Bearer ${access_token}` };
  expect((await request.get(`/api/user/${user.id}/`, { headers: bearer })).status()).toBe(200);

  await signIn(page, user.email, user.password, "/login?callbackUrl=%2Fsettings%2Fapps");
  await expect(page.getByRole("heading", { name: "Nightly Backup" })).toBeVisible();
  await page.getByRole("button", { name: "Disconnect Nightly Backup" }).click();
  await page.getByRole("dialog", { name: "Disconnect Nightly Backup?" }).getByRole("button", { name: "Disconnect" }).click();
  await expect(page.getByText("No app has access to your account.")).toBeVisible();
  expect((await request.get(`/api/user/${user.id}/`, { headers: bearer })).status()).toBe(401);
});
