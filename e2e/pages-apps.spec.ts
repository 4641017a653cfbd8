// Apps and clients in the browser (docs/rules/tokens.md#consent, docs/rules/pages.md#connected-apps), at
// desktop and phone sizes: the consent page inside the flow (no site navigation, "Not you? Switch account",
// write access set apart, revocable under Apps), keyboard-only runs of sign-in, consent and redeem,
// /settings/apps listing an approved app before it used a token, the client registration form, and the
// confirmations of disconnect, rotate and delete.
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { exportJWK, generateKeyPair } from "jose";
import { CALLBACK, cli, cliAsync, expectAt, newUsers, signInAt, startCallbackServer, type User } from "./helpers";
import { checkPage, contextOptions, isPhone } from "./page-checks";

let stopCallbackServer: () => Promise<void>;
test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
});
test.afterAll(() => stopCallbackServer());

const authorizeUrl = (clientId: string, scope = "readonly readwrite") =>
  `/api/connect/oauth2/auth/?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: CALLBACK, scope, state: "st" })}`;

const codeClient = (owner: User, name: string) =>
  cliAsync<{ client_id: string; client_secret: string }>("client:create", "--owner", owner.email, "--name", name, "--grant", "authorization_code", "--redirect-uri", CALLBACK);

const status = (page: Page, text: string | RegExp) => page.getByRole("status").filter({ hasText: text });

/** Presses Tab until `target` has the focus (at most `max` times) and says how many presses it took. */
async function tabTo(page: Page, target: ReturnType<Page["getByRole"]>, max: number): Promise<number> {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press("Tab");
    if (await target.evaluate((element) => element === document.activeElement)) return presses;
  }
  throw new Error(`not reached with ${max} presses of Tab`);
}

test("keyboard only: sign in from the app's request, then consent: the form first, Approve within three Tab stops", async ({ page }) => {
  const [maker, user] = await newUsers("Pat Maker", "Kay Keys");
  const client = await codeClient(maker, "Photo Printer");
  await page.goto(authorizeUrl(client.client_id));
  await expect(page.getByText("Sign in to continue to Photo Printer")).toBeVisible();
  // The form works once the page's script runs (until then its button is disabled, so nothing is lost).
  await expect(page.getByRole("button", { name: "Sign in" })).toBeEnabled();
  // The e-mail field has the focus: type, Tab to the password, Enter.
  await page.keyboard.type(user.email);
  await page.keyboard.press("Tab");
  await expect(page.getByLabel("Password")).toBeFocused();
  await page.keyboard.type(user.password);
  await page.keyboard.press("Enter");

  await expect(page.getByRole("heading", { name: "Allow Photo Printer to access your account?" })).toBeVisible();
  // Inside the flow the header has no navigation: nothing leads away from the decision.
  await expect(page.getByRole("navigation")).toHaveCount(0);
  await expect(page.getByRole("banner").getByRole("link")).toHaveCount(0);
  await expect(page.getByRole("banner").getByText(user.email)).toBeVisible();
  // Write access is set apart from read access, in words.
  await expect(page.getByRole("listitem").filter({ hasText: "Can change" })).toHaveText(/Can change.*Also create bundles/);
  await expect(page.getByRole("listitem").filter({ hasText: "Can read" })).toHaveText(/Can read.*Read your profile/);
  await expect(page.getByText("You can take this access back at any time: it is listed under Apps")).toBeVisible();
  await checkPage(page, "consent");
  // From the top of the page: the skip link, "Switch account", then Approve.
  await page.locator("body").evaluate((body) => (document.activeElement as HTMLElement | null)?.blur() ?? body);
  expect(await tabTo(page, page.getByRole("button", { name: "Approve" }), 3)).toBeLessThanOrEqual(3);
  await page.keyboard.press("Enter");
  await expectAt(page, CALLBACK);
  expect(new URL(page.url()).searchParams.get("code")).toBeTruthy();

  // Listed under Apps at once, before the app has exchanged its code.
  await page.goto("/settings/apps");
  const card = page.getByRole("listitem").filter({ has: page.getByRole("heading", { name: "Photo Printer" }) });
  await expect(card.getByText("Registered by Pat Maker")).toBeVisible();
  await expect(card.getByText("Approved")).toBeVisible();
  await expect(card.getByText("Not yet")).toBeVisible();
  await expect(card.getByText("Can change")).toBeVisible();
  await checkPage(page, "apps");

  // Disconnect asks first; Cancel changes nothing.
  await card.getByRole("button", { name: "Disconnect Photo Printer" }).click();
  const dialog = page.getByRole("dialog", { name: "Disconnect Photo Printer?" });
  await checkPage(page, "apps-confirm-disconnect", { assets: false });
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await page.reload();
  await expect(page.getByRole("heading", { name: "Photo Printer" })).toBeVisible();
  await page.getByRole("button", { name: "Disconnect Photo Printer" }).click();
  await dialog.getByRole("button", { name: "Disconnect" }).click();
  await expect(status(page, "Disconnected Photo Printer: it can no longer use your account")).toBeVisible();
  await expect(page.getByText("No app has access to your account.")).toBeVisible();
  // The consent is forgotten: the app must ask again.
  await page.goto(authorizeUrl(client.client_id));
  await expect(page.getByRole("heading", { name: "Allow Photo Printer to access your account?" })).toBeVisible();
});

test("Not you? Switch account: signs out, and the same request goes on for the other account", async ({ page }) => {
  const [maker, first, second] = await newUsers("Pat Maker", "First Person", "Second Person");
  const client = await codeClient(maker, "Photo Printer");
  await signInAt(page, first, "/");
  await page.goto(authorizeUrl(client.client_id, "readonly"));
  await expect(page.getByText(`It asks for access to the account of ${first.email}.`)).toBeVisible();
  await page.getByRole("button", { name: "Switch account" }).click();
  await expect(page).toHaveURL(/\/login\?callbackUrl=/);
  await expect(page.getByText("Sign in to continue to Photo Printer")).toBeVisible();
  await page.getByLabel("Email").fill(second.email);
  await page.getByLabel("Password").fill(second.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText(`It asks for access to the account of ${second.email}.`)).toBeVisible();
  await page.getByRole("button", { name: "Approve" }).click();
  await expectAt(page, CALLBACK);
  expect(new URL(page.url()).searchParams.get("state")).toBe("st");
});

async function passwordToken(request: APIRequestContext, user: User): Promise<string> {
  const client = await cliAsync<{ client_id: string; client_secret: string }>("client:create", "--owner", user.email, "--name", `Script of ${user.name}`, "--grant", "password");
  const res = await request.post("/api/connect/oauth2/token/", { data: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password, scope: "readonly readwrite" } });
  expect(res.status()).toBe(200);
  return (await res.json()).access_token;
}

test("keyboard only: the mailed link, past the header with the skip link, Accept", async ({ page, request }) => {
  const [owner, asker] = await newUsers("Olga Owner", "Abe Asker");
  const bundle = cli<{ resource_uri: string }>("bundle:create", "--owner", owner.email, "--name", "Maps");
  const created = await request.post("/api/bundle_permission_request/", {
    headers: { authorization: `Bearer ${await passwordToken(request, asker)}` },
    data: { bundle: bundle.resource_uri, user_allowed: asker.email, user_target: owner.email },
  });
  expect(created.status()).toBe(201);
  const [mail] = cli<{ text: string }[]>("mail:list", "--to", owner.email);
  const link = /https?:\/\/\S+\/redeem\?\S*token=[\w-]+/.exec(mail!.text)![0];
  await signInAt(page, owner, "/");
  await page.goto(link);
  await expect(page.getByText(`Abe Asker (${asker.email}) asks you for access to your bundle “Maps”.`)).toBeVisible();
  await expect(page.getByRole("button", { name: "Accept" })).toBeEnabled();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to main content" })).toBeFocused();
  await page.keyboard.press("Enter");
  expect(await tabTo(page, page.getByRole("button", { name: "Accept" }), 2)).toBeLessThanOrEqual(2);
  await page.keyboard.press("Enter");
  await expect(page.getByText("Accepted")).toBeVisible();
});

test("registering a client: a bad redirect URI keeps the form and is explained at the field; copy buttons; rotate and delete ask first", async ({ browser, request }) => {
  const [user] = await newUsers("Cleo Client");
  const context = await browser.newContext(contextOptions());
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const tab = await context.newPage();
  await signInAt(tab, user, "/settings/clients");
  await checkPage(tab, "clients-empty");

  await tab.getByLabel("Name").fill("My Site");
  await tab.getByLabel("Redirect URIs", { exact: true }).fill("https://ok.example/callback\nhttp://evil.example/callback");
  await tab.getByRole("button", { name: "Register client" }).click();
  const uris = tab.getByLabel("Redirect URIs", { exact: true });
  await expect(uris).toHaveAccessibleDescription(/Line 2 \(http:\/\/evil\.example\/callback\) must use https \(http only on localhost, 127\.0\.0\.1 or \[::1\]\)\./);
  await expect(uris).toBeFocused();
  await expect(uris).toHaveValue("https://ok.example/callback\nhttp://evil.example/callback");
  await expect(tab.getByLabel("Name")).toHaveValue("My Site");
  await expect(tab.getByLabel("Grant type")).toHaveValue("authorization_code");
  await checkPage(tab, "clients-field-error", { assets: false });

  // A password client (its secret can be tried at the token endpoint at once).
  await tab.getByLabel("Name").fill("My Script");
  await tab.getByLabel("Grant type").selectOption("password");
  await uris.fill("");
  await tab.getByRole("button", { name: "Register client" }).click();
  const secret = (await tab.getByTestId("new-client-secret").textContent())!;
  const clientId = (await tab.getByTestId("new-client-id").textContent())!;
  // The choices stay as picked after the success; what was typed is cleared
  // (docs/rules/pages.md#choices-stay-as-picked).
  await expect(tab.getByLabel("Grant type")).toHaveValue("password");
  await expect(tab.getByLabel("Name")).toHaveValue("");
  await tab.getByRole("button", { name: "Copy client_secret" }).click();
  await expect(tab.getByText("Copied")).toBeVisible();
  expect(await tab.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  await checkPage(tab, "clients-registered");
  const tokenWith = (clientSecret: string) =>
    request.post("/api/connect/oauth2/token/", { data: { grant_type: "password", client_id: clientId, client_secret: clientSecret, username: user.email, password: user.password } });
  expect((await tokenWith(secret)).status()).toBe(200);

  // Rotate: Cancel keeps the secret; confirming replaces it.
  await tab.reload();
  await tab.getByRole("button", { name: "Rotate secret of My Script" }).click();
  await tab.getByRole("dialog", { name: "Rotate the secret of My Script?" }).getByRole("button", { name: "Cancel" }).click();
  expect((await tokenWith(secret)).status()).toBe(200);
  await tab.getByRole("button", { name: "Rotate secret of My Script" }).click();
  await tab.getByRole("dialog", { name: "Rotate the secret of My Script?" }).getByRole("button", { name: "Rotate secret" }).click();
  await expect(tab.getByText("New secret issued: the old one no longer works.")).toBeVisible();
  const rotated = (await tab.getByTestId("new-client-secret").textContent())!;
  expect((await tokenWith(secret)).status()).toBe(401);
  expect((await tokenWith(rotated)).status()).toBe(200);

  // Delete: Cancel keeps the client; confirming deletes it and says so.
  await tab.getByRole("button", { name: "Delete My Script" }).click();
  await tab.getByRole("dialog", { name: "Delete My Script?" }).getByRole("button", { name: "Cancel" }).click();
  await tab.reload();
  await expect(tab.getByRole("heading", { name: "My Script" })).toBeVisible();
  await tab.getByRole("button", { name: "Delete My Script" }).click();
  await tab.getByRole("dialog", { name: "Delete My Script?" }).getByRole("button", { name: "Delete client" }).click();
  await expect(status(tab, "Deleted My Script. Every connection and token it had has ended.")).toBeVisible();
  await expect(tab.getByRole("heading", { name: "My Script" })).toHaveCount(0);
  expect((await tokenWith(rotated)).status()).toBe(401);
  await context.close();
});

test("registering a client with sign-out addresses and public keys: the list shows them; a client with keys has no secret to copy or rotate", async ({ page }) => {
  const [user] = await newUsers("Lou Logout");
  await signInAt(page, user, "/settings/clients");

  await page.getByLabel("Name").fill("Signs out too");
  await page.getByLabel("Redirect URIs", { exact: true }).fill("https://rp.example/callback");
  await page.getByLabel("Post-logout redirect URIs").fill("https://rp.example/signed-out\nhttp://localhost:8000/bye");
  await page.getByLabel("Back-channel logout URI").fill("https://rp.example/backchannel");
  await page.getByRole("button", { name: "Register client" }).click();
  await expect(page.getByTestId("new-client-secret")).toBeVisible();
  const signedOut = page.getByRole("list", { name: "Post-logout redirect URIs of Signs out too" });
  await expect(signedOut.getByRole("listitem")).toHaveText(["after sign-out: https://rp.example/signed-out", "after sign-out: http://localhost:8000/bye"]);
  await expect(page.getByText("back-channel logout: https://rp.example/backchannel")).toBeVisible();

  // An address that may not be registered is explained at its field, and nothing is registered.
  await page.getByLabel("Name").fill("Bad logout");
  await page.getByLabel("Redirect URIs", { exact: true }).fill("https://rp.example/callback");
  await page.getByLabel("Back-channel logout URI").fill("http://rp.example/backchannel");
  await page.getByRole("button", { name: "Register client" }).click();
  await expect(page.getByLabel("Back-channel logout URI")).toHaveAccessibleDescription(/Must use https/);
  await expect(page.getByRole("heading", { name: "Bad logout" })).toHaveCount(0);

  // Public keys: the client signs a JWT (private_key_jwt) and gets no secret.
  const { publicKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "e2e-key", alg: "ES256", use: "sig" };
  await page.getByLabel("Name").fill("Signs a JWT");
  await page.getByLabel("Redirect URIs", { exact: true }).fill("https://jwt.example/callback");
  await page.getByLabel("Back-channel logout URI").fill("");
  await page.getByLabel("Public keys (JWK Set)").fill(JSON.stringify({ keys: [jwk] }));
  await page.getByRole("button", { name: "Register client" }).click();
  await expect(page.getByText("It signs a JWT with its keys instead of sending a secret: it has no secret.")).toBeVisible();
  await expect(page.getByTestId("new-client-secret")).toHaveCount(0);
  await expect(page.getByText("Signs a JWT with its keys instead of sending a secret (private_key_jwt).")).toBeVisible();
  await expect(page.getByRole("button", { name: "Rotate secret of Signs a JWT" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Rotate secret of Signs out too" })).toBeVisible();
});

test("the device pages: sign-in names the app on the device, the code form, a wrong code, the consent, the outcome", async ({ page, request }) => {
  const [maker, user] = await newUsers("Dee Maker", "Dev Ice");
  const device = await cliAsync<{ client_id: string }>("client:create", "--owner", maker.email, "--name", "Living Room TV", "--grant", "device_code", "--public");
  const started = await request.post("/api/connect/oauth2/device/", { form: { client_id: device.client_id, scope: "readonly readwrite" } });
  expect(started.status()).toBe(200);
  const { user_code: userCode, verification_uri_complete: complete } = (await started.json()) as { user_code: string; verification_uri_complete: string };

  // Signed out, the link from the device's screen leads through sign-in, which says what it is for.
  await page.goto(complete);
  await expect(page).toHaveURL(/\/login\?callbackUrl=/);
  await expect(page.getByText("Sign in to connect Living Room TV on your device")).toBeVisible();
  await expect(page.getByLabel("Email")).toBeFocused();
  await checkPage(page, "login-for-device", { assets: false });
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByLabel("Code")).toHaveValue(userCode);
  await checkPage(page, "device");

  // A wrong code says so at the form.
  await page.getByLabel("Code").fill("BCDF-GHJK");
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByText("That code is not valid")).toBeVisible();
  await checkPage(page, "device-wrong-code", { assets: false });

  // The right one: the consent page of the flow, then the outcome.
  await page.getByLabel("Code").fill(userCode);
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByRole("heading", { name: "Allow Living Room TV to access your account?" })).toBeVisible();
  await expect(page.getByText(userCode)).toBeVisible();
  await expect(page.getByRole("navigation")).toHaveCount(0);
  await checkPage(page, "device-consent", { assets: false });
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("heading", { name: "Device connected" })).toBeVisible();
  await checkPage(page, "device-approved", { assets: false });
  if (isPhone()) await expect(page.getByRole("button", { name: "Menu" })).toBeVisible();
});
