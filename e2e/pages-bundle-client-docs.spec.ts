// The second pass of the pages, from the person's side, at desktop and phone sizes
// (docs/rules/pages.md#editing-a-client, #bundle-page, #developer-page): a client is edited in place and keeps
// its client_id and the consent people gave it; after registering, the page shows an authorization URL that
// works as it is; a bundle's page shows who may read it and the requests about it, only to them (404 page for
// anyone else), and its ask-for-access link opens the request form filled in; /docs lists the deployment's
// own addresses with copy-ready examples. Each new page is checked by axe, screenshotted, and loaded under the
// Content-Security-Policy without a violation (as e2e/headers.spec.ts does for the others).
import { expect, test, type Browser, type Page } from "@playwright/test";
import { baseURL } from "./env";
import { CALLBACK, expectAt, newUsers, signInAt, startCallbackServer, type User } from "./helpers";
import { checkPage, contextOptions } from "./page-checks";

let stopCallbackServer: () => Promise<void>;
test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
});
test.afterAll(() => stopCallbackServer());

const status = (page: Page, text: string | RegExp) => page.getByRole("status").filter({ hasText: text });

/** CSP violations, console errors and uncaught exceptions of a page (as e2e/headers.spec.ts collects them). */
async function watch(page: Page): Promise<string[]> {
  const problems: string[] = [];
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI}`));
  });
  page.on("console", (message) => {
    if (message.type() === "error" && !/status of 404/.test(message.text())) problems.push(`${page.url()}: console error: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`${page.url()}: exception: ${error.message}`));
  return problems;
}

/** Opens `path` and checks that its policy carries a nonce that every script of the page has. */
async function visitSecured(page: Page, path: string) {
  const response = await page.goto(path);
  const policy = (await response!.allHeaders())["content-security-policy"] ?? "";
  const nonce = /'nonce-([A-Za-z0-9+/]{22}==)'/.exec(policy)?.[1];
  expect(nonce, `${path}: ${policy}`).toBeTruthy();
  expect(policy).toContain("frame-ancestors 'none'");
  const scripts = await page.locator("script").evaluateAll((elements) => elements.map((element) => (element as HTMLScriptElement).nonce));
  expect(scripts.every((value) => value === nonce), `${path}: a script without the nonce`).toBe(true);
  return response!;
}

async function signedIn(browser: Browser, user: User, path: string) {
  const context = await browser.newContext(contextOptions());
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const page = await context.newPage();
  const problems = await watch(page);
  await signInAt(page, user, path);
  return { page, problems, close: () => context.close() };
}

test("a client: the authorization URL shown after registering works as it is; Edit changes it in place and keeps its client_id and the consent", async ({ browser }) => {
  const [user] = await newUsers("Tess Tryit");
  const { page, problems, close } = await signedIn(browser, user, "/settings/clients");
  await page.getByLabel("Name").fill("Try Me");
  await page.getByLabel("Redirect URIs", { exact: true }).fill(CALLBACK);
  await page.getByRole("button", { name: "Register client" }).click();
  const clientId = (await page.getByTestId("new-client-id").textContent())!;
  await expect(page.getByTestId("new-client-issuer")).toHaveText(baseURL);
  const tryUrl = (await page.getByTestId("new-client-authorization-url").textContent())!;
  expect(tryUrl.startsWith(`${baseURL}/api/connect/oauth2/auth/?`)).toBe(true);
  expect(new URL(tryUrl).searchParams.get("client_id")).toBe(clientId);
  await page.getByRole("button", { name: "Copy Authorization URL to try" }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(tryUrl);
  await checkPage(page, "clients-registered-try-it");

  // The URL as it is: sign-in is done, so the consent page, then the redirect URI with a code.
  await page.goto(tryUrl);
  await expect(page.getByRole("heading", { name: "Allow Try Me to access your account?" })).toBeVisible();
  await page.getByRole("button", { name: "Approve" }).click();
  await expectAt(page, CALLBACK);
  expect(new URL(page.url()).searchParams.get("code")).toBeTruthy();

  // Edit: the form holds the client's values; a bad address is explained at its field and nothing changes.
  await page.goto("/settings/clients");
  const edit = page.getByRole("button", { name: "Edit Try Me" });
  await expect(edit).toHaveAttribute("aria-expanded", "false");
  await edit.click();
  await expect(edit).toHaveAttribute("aria-expanded", "true");
  const form = page.getByRole("form", { name: "Edit Try Me" });
  await expect(form.getByLabel("Name")).toHaveValue("Try Me");
  await expect(form.getByLabel("Redirect URIs", { exact: true })).toHaveValue(CALLBACK);
  await checkPage(page, "clients-edit", { assets: false });
  await form.getByLabel("Name").fill("Try Me Too");
  await form.getByLabel("Redirect URIs", { exact: true }).fill(`${CALLBACK}\nhttp://evil.example/cb`);
  await form.getByRole("button", { name: "Save changes" }).click();
  const uris = form.getByLabel("Redirect URIs", { exact: true });
  await expect(uris).toHaveAccessibleDescription(/Line 2 \(http:\/\/evil\.example\/cb\) must use https/);
  await expect(uris).toBeFocused();
  await expect(form.getByLabel("Name")).toHaveValue("Try Me Too");
  await checkPage(page, "clients-edit-field-error", { assets: false });
  await page.reload();
  await expect(page.getByRole("heading", { name: "Try Me", exact: true })).toBeVisible();

  // Saved: a new name, a second redirect URI and a logo; the same client_id, and the consent still holds.
  await page.getByRole("button", { name: "Edit Try Me" }).click();
  const again = page.getByRole("form", { name: "Edit Try Me" });
  await again.getByLabel("Name").fill("Try Me Too");
  await again.getByLabel("Redirect URIs", { exact: true }).fill(`https://elsewhere.example/cb\n${CALLBACK}`);
  await again.getByLabel("Logo URI").fill("https://elsewhere.example/logo.png");
  await again.getByRole("button", { name: "Save changes" }).click();
  await expect(page.getByText("Saved Try Me Too. Its client_id, secret and every connection people gave it are unchanged.")).toBeVisible();
  await expect(page.getByRole("heading", { name: "Try Me Too" })).toBeVisible();
  await expect(page.getByRole("list", { name: "Redirect URIs of Try Me Too" }).getByRole("listitem")).toHaveText(["https://elsewhere.example/cb", CALLBACK]);
  await expect(page.getByTestId("client-id")).toHaveText(clientId);
  await expect(page.getByText("logo: https://elsewhere.example/logo.png")).toBeVisible();
  await checkPage(page, "clients-edited");
  const silent = new URL(tryUrl);
  silent.searchParams.set("prompt", "none");
  await page.goto(silent.toString());
  await expectAt(page, CALLBACK);
  expect(new URL(page.url()).searchParams.get("code")).toBeTruthy();
  await page.goto("/settings/apps");
  await expect(page.getByRole("heading", { name: "Try Me Too" })).toBeVisible();
  expect(problems).toEqual([]);
  await close();
});

test("a bundle's page: the name links there; who may read it and the requests; the ask-for-access link fills the form; 404 for anyone else", async ({ browser }) => {
  const [olive, fay, rita] = await newUsers("Olive Owner", "Fay Friend", "Rita Requester");
  const owner = await signedIn(browser, olive, "/settings/sharing");
  await owner.page.getByLabel("Bundle name").fill("Holiday photos");
  await owner.page.getByRole("button", { name: "Create bundle" }).click();
  const created = status(owner.page, "Created “Holiday photos”");
  await expect(created).toBeVisible();
  const bundleId = Number(/bundle id (\d+)/.exec(await created.innerText())![1]);
  await owner.page.getByLabel("Your bundle", { exact: true }).selectOption(String(bundleId));
  await owner.page.getByLabel("E-mail of the person to let in").fill(fay.email);
  await owner.page.getByRole("button", { name: "Let in", exact: true }).click();
  await expect(owner.page.getByRole("list", { name: "Who may read Holiday photos" })).toContainText("Fay Friend");

  // The name is a link to the bundle's page, never to its JSON.
  const nameLink = owner.page.getByRole("heading", { name: "Holiday photos" }).getByRole("link", { name: "Holiday photos" });
  await expect(nameLink).toHaveAttribute("href", `/bundles/${bundleId}`);
  await nameLink.click();
  await expect.poll(() => new URL(owner.page.url()).pathname).toBe(`/bundles/${bundleId}`);
  await visitSecured(owner.page, `/bundles/${bundleId}`);
  await expect(owner.page.getByRole("heading", { name: "Holiday photos", level: 1 })).toBeVisible();
  await expect(owner.page.getByRole("list", { name: "Who may read Holiday photos" }).getByRole("listitem")).toHaveCount(2);
  await expect(owner.page.getByRole("button", { name: "Revoke Fay Friend's access to Holiday photos" })).toBeVisible();
  await expect(owner.page.getByText("Nobody has asked you for access to it.")).toBeVisible();
  await owner.page.getByRole("button", { name: "Copy the ask-for-access link of Holiday photos" }).click();
  const askLink = await owner.page.evaluate(() => navigator.clipboard.readText());
  expect(askLink).toBe(`${baseURL}/bundles/${bundleId}/ask?${new URLSearchParams({ owner: olive.email })}`);
  await checkPage(owner.page, "bundle-owner");

  // Rita opens the link: sign-in, then the request form filled in.
  const asker = await signedIn(browser, rita, "/settings/sharing");
  await visitSecured(asker.page, askLink);
  await expect(asker.page.getByRole("heading", { name: "Ask for access", level: 1 })).toBeVisible();
  await expect(asker.page.getByLabel("Owner's e-mail")).toHaveValue(olive.email);
  await expect(asker.page.getByLabel("Bundle id or link")).toHaveValue(String(bundleId));
  await expect(asker.page.getByLabel("Person to let in")).toHaveValue(rita.email);
  await checkPage(asker.page, "bundle-ask");
  await asker.page.getByRole("button", { name: "Send request" }).click();
  await expect(asker.page.getByText(/^Request sent:/)).toBeVisible();

  // Not let in yet: the bundle's page is the 404 page for her, as for a bundle that does not exist.
  const hidden = await asker.page.goto(`/bundles/${bundleId}`);
  expect(hidden!.status()).toBe(404);
  await expect(asker.page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await expect(asker.page.getByText("Holiday photos")).toHaveCount(0);
  expect((await asker.page.goto(`/bundles/${bundleId + 1000}`))!.status()).toBe(404);
  expect((await asker.page.goto("/bundles/not-a-number"))!.status()).toBe(404);
  // In "Requests you sent" the name is no link: the page would be the 404 page.
  await asker.page.goto("/settings/sharing");
  await expect(asker.page.getByText(/You asked Olive Owner \(user \d+\) to let you read “Holiday photos”\./)).toBeVisible();
  await expect(asker.page.getByRole("link", { name: "Holiday photos" })).toHaveCount(0);

  // The owner sees the request on the bundle's page and accepts it there.
  await owner.page.reload();
  const requests = owner.page.getByRole("list", { name: "Requests about Holiday photos" });
  await expect(requests).toContainText(`Rita Requester (${rita.email}) asked you to let them read “Holiday photos”.`);
  await expect(requests).toContainText("Waiting for an answer");
  await checkPage(owner.page, "bundle-owner-request");
  await owner.page.getByRole("button", { name: "Accept the request for Holiday photos" }).click();
  await expect(status(owner.page, /Accepted: .* can now read “Holiday photos”\./)).toBeVisible();
  await expect(requests).toContainText("Accepted");
  await expect(owner.page.getByRole("list", { name: "Who may read Holiday photos" }).getByRole("listitem")).toHaveCount(3);

  // Now Rita may read it: the page shows her own access and her request, not the others let in.
  await asker.page.goto("/settings/sharing");
  await asker.page.getByRole("list", { name: "Bundles shared with you" }).getByRole("link", { name: "Holiday photos" }).click();
  await expect(asker.page.getByRole("heading", { name: "Holiday photos", level: 1 })).toBeVisible();
  const readers = asker.page.getByRole("list", { name: "Who may read Holiday photos" }).getByRole("listitem");
  await expect(readers).toHaveCount(2);
  await expect(readers.nth(1)).toContainText("You");
  await expect(asker.page.getByText("Fay Friend")).toHaveCount(0);
  await expect(asker.page.getByRole("button", { name: "Give up access to Holiday photos" })).toBeVisible();
  await expect(asker.page.getByRole("button", { name: /Copy the ask-for-access link/ })).toHaveCount(0);
  await checkPage(asker.page, "bundle-allowed");
  expect([...owner.problems, ...asker.problems]).toEqual([]);
  await owner.close();
  await asker.close();
});

test("/docs: the issuer, every endpoint with its full URL, copy-ready examples with this server's addresses", async ({ browser }) => {
  const context = await browser.newContext(contextOptions());
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const page = await context.newPage();
  const problems = await watch(page);
  await visitSecured(page, "/docs");
  await expect(page.getByRole("heading", { name: "Developer documentation", level: 1 })).toBeVisible();
  await expect(page.getByTestId("issuer")).toHaveText(baseURL);
  const discovery = (await (await page.request.get("/.well-known/openid-configuration")).json()) as Record<string, unknown>;
  const endpoints = page.getByRole("region", { name: "Endpoints" });
  for (const [field, url] of Object.entries(discovery)) {
    if (typeof url === "string" && (field.endsWith("_endpoint") || field === "jwks_uri")) await expect(endpoints.getByText(url, { exact: true })).toBeVisible();
  }
  for (const title of ["curl", "Sign people in: openid-client", "Call the API for a person: oauth4webapi", "Connect an AI agent: the MCP TypeScript SDK"]) {
    await expect(page.getByRole("heading", { name: title, level: 2 })).toBeVisible();
  }
  await page.getByRole("button", { name: "Copy the curl example" }).click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toContain(`curl -s ${discovery.token_endpoint as string}`);
  expect(copied).toContain(`curl -s ${baseURL}/api/bundle/`);
  await expect(page.getByRole("main")).not.toContainText(/README|docs\/api\.md/);
  await checkPage(page, "docs");
  expect(problems).toEqual([]);
  await context.close();
});
