// Rules of docs/rules/ that a browser decides, in Chromium against the production build: the consent
// page cannot be framed by another site; a client registered on /settings/clients is never first-party,
// whatever the form sends; /dev/mailbox is for signed-in users only, and absent from a production server
// that did not ask for it.
import { expect, test, type Page } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import { callbackPort, e2eEnv, extraPort } from "./env";
import { CALLBACK, cli, newUser, signIn, startCallbackServer } from "./helpers";

let stopCallbackServer: () => Promise<void>;
test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
});
test.afterAll(() => stopCallbackServer());

/** Signs in and opens the consent page of a new authorization code client; returns its URL. */
async function consentPage(page: Page): Promise<string> {
  const owner = newUser("Framed Owner");
  const registered = cli<{ client_id: string }>("client:create", "--owner", owner.email, "--name", "Framed App", "--grant", "authorization_code", "--redirect-uri", CALLBACK);
  const user = newUser();
  await signIn(page, user.email);
  await expect(page.getByText("Signed in as")).toBeVisible();
  await page.goto(`/api/connect/oauth2/auth/?response_type=code&client_id=${registered.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&scope=readonly&state=framed`);
  await expect(page.getByRole("button", { name: "Approve" })).toBeVisible();
  expect(new URL(page.url()).pathname).toBe("/consent");
  return page.url();
}

test.describe("the consent page and framing", () => {
  test("answers with X-Frame-Options: DENY and frame-ancestors 'none'", async ({ page }) => {
    const url = await consentPage(page);
    const response = await page.goto(url);
    expect(response?.status()).toBe(200);
    const headers = response!.headers();
    expect(headers["x-frame-options"]).toBe("DENY");
    expect(headers["content-security-policy"]).toMatch(/(^|;)\s*frame-ancestors 'none'\s*(;|$)/);
  });

  test("is not shown inside another site's frame: no Approve button can be clicked through it", async ({ page }) => {
    const url = await consentPage(page);
    await page.goto(`http://localhost:${callbackPort}/frame?src=${encodeURIComponent(url)}`);
    // The frame finished loading (Chromium fires load for a frame it refused, with its own error page in it).
    await expect.poll(() => page.evaluate(() => (window as { framedLoaded?: boolean }).framedLoaded === true)).toBe(true);
    const framed = page.frames().find((frame) => frame !== page.mainFrame());
    expect(framed).toBeDefined();
    expect(framed!.url()).not.toBe(url);
    await expect(page.frameLocator("#framed").getByRole("button", { name: "Approve" })).toHaveCount(0);
    // Control: the same page on its own shows the form, so the frame above was refused, not empty.
    await page.goto(url);
    await expect(page.getByRole("button", { name: "Approve" })).toBeVisible();
  });
});

test("a client registered on /settings/clients is never first-party, whatever the form sends: its users are asked to consent", async ({ page }) => {
  const owner = newUser("Eager Owner");
  await signIn(page, owner.email, owner.password, "/login?callbackUrl=%2Fsettings%2Fclients");
  await expect(page.getByRole("heading", { name: "Your clients" })).toBeVisible();
  await page.getByLabel("Name").fill("Claims To Be Ours");
  await page.getByLabel("Grant type").selectOption("authorization_code");
  await page.getByLabel("Redirect URIs", { exact: true }).fill(CALLBACK);
  // What a forged form would add, under every name a first-party flag could have.
  await page.locator("form:has(#redirect_uris)").evaluate((form) => {
    for (const [name, value] of [["first_party", "on"], ["firstParty", "true"], ["first-party", "on"], ["firstParty", "on"]]) {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = name!;
      input.value = value!;
      form.appendChild(input);
    }
  });
  await page.getByRole("button", { name: "Register client" }).click();
  const clientId = (await page.getByTestId("new-client-id").textContent())!;
  expect(clientId).toMatch(/^[\w-]{16,}$/);

  // A first-party client's consent is implied (docs/rules/tokens.md#clients); this one's users see the consent
  // page.
  await page.goto(`/api/connect/oauth2/auth/?response_type=code&client_id=${encodeURIComponent(clientId)}&redirect_uri=${encodeURIComponent(CALLBACK)}&scope=readonly&state=fp`);
  await expect(page.getByRole("heading", { name: "Allow Claims To Be Ours to access your account?" })).toBeVisible();
  expect(new URL(page.url()).pathname).toBe("/consent");
});

test.describe("/dev/mailbox", () => {
  test("is only for signed-in users: signed out it leads to sign-in, signed in it shows the outbox", async ({ page, request }) => {
    const target = newUser("Mailbox Target");
    const requester = newUser("Mailbox Requester");
    const bundle = cli<{ resource_uri: string }>("bundle:create", "--owner", target.email, "--name", "Mailbox bundle");
    const registered = cli<{ client_id: string; client_secret: string }>("client:create", "--owner", requester.email, "--name", "Script", "--grant", "password");
    const token = await request.post("/api/connect/oauth2/token/", {
      data: { grant_type: "password", client_id: registered.client_id, client_secret: registered.client_secret, username: requester.email, password: requester.password, scope: "readwrite" },
    });
    const created = await request.post("/api/bundle_permission_request/", {
      headers: { authorization: `Bearer ${(await token.json()).access_token}` },
      data: { bundle: bundle.resource_uri, user_allowed: requester.email, user_target: target.email },
    });
    expect(created.status()).toBe(201);

    for (const path of ["/dev/mailbox", "/dev/mailbox/1"]) {
      await page.goto(path);
      await expect.poll(() => new URL(page.url()).pathname).toBe("/login");
      expect(new URL(page.url()).searchParams.get("callbackUrl")).toBe(path);
      await expect(page.getByText("Mailbox bundle")).toHaveCount(0);
    }
    await signIn(page, requester.email, requester.password, "/login?callbackUrl=%2Fdev%2Fmailbox");
    await expect(page.getByRole("heading", { name: "Development mailbox" })).toBeVisible();
    const message = page.getByRole("link", { name: /Mailbox bundle/ }).first();
    await expect(message).toBeVisible();
    await message.click();
    await expect(page.getByText(/\/redeem\?token=[\w-]{43}/).first()).toBeVisible();
  });

  test("does not exist on a production server started without DEV_MAILBOX, even for a signed-in user", async ({ page }) => {
    const port = extraPort;
    const server = startProductionServer(port);
    try {
      await expect.poll(async () => (await fetch(`http://localhost:${port}/api/ready`).catch(() => null))?.status ?? 0, { timeout: 60_000 }).toBe(200);
      const user = newUser();
      await signIn(page, user.email, user.password, `http://localhost:${port}/login`);
      await expect(page.getByText("Signed in as")).toBeVisible();
      const response = await page.goto(`http://localhost:${port}/dev/mailbox`);
      expect(response?.status()).toBe(404);
      await expect(page.getByRole("heading", { name: "Development mailbox" })).toHaveCount(0);
    } finally {
      await stop(server);
    }
  });
});

/** `npm start` on the suite's database and build, without DEV_MAILBOX, on `port`. */
function startProductionServer(port: number): ChildProcess {
  const env = { ...process.env, ...e2eEnv, PORT: String(port), APP_URL: `http://localhost:${port}`, DEV_MAILBOX: "" } as NodeJS.ProcessEnv;
  return spawn("npm", ["run", "-s", "start"], { env, detached: true, stdio: "ignore" });
}

async function stop(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const ended = new Promise((done) => server.once("exit", done));
  process.kill(-server.pid!, "SIGTERM");
  const killer = setTimeout(() => process.kill(-server.pid!, "SIGKILL"), 10_000);
  await ended;
  clearTimeout(killer);
}
