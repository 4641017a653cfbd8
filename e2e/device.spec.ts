// The device flow's pages in Chromium (RFC 8628 3.3, docs/rules/pages.md#device-page): a person types the code
// shown on a device into /device (or arrives with it filled in from verification_uri_complete, signing in on
// the way), approves or denies on the consent page, and is told the outcome; a wrong code says so. The
// device's side is plain HTTP, as a command-line tool would do it.
import { expect, test, type APIRequestContext } from "@playwright/test";
import { cli, newUser, signIn } from "./helpers";

const GRANT = "urn:ietf:params:oauth:grant-type:device_code";

type Device = { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; interval: number };

function deviceClient(name: string): { client_id: string } {
  return cli<{ client_id: string }>("client:create", "--owner", newUser("Device Maker").email, "--name", name, "--grant", "device_code", "--public");
}

async function startDevice(request: APIRequestContext, clientId: string, scope = "readonly"): Promise<Device> {
  const res = await request.post("/api/connect/oauth2/device/", { form: { client_id: clientId, scope } });
  expect(res.status()).toBe(200);
  return res.json();
}

const poll = (request: APIRequestContext, clientId: string, deviceCode: string) =>
  request.post("/api/connect/oauth2/token/", { form: { grant_type: GRANT, device_code: deviceCode, client_id: clientId } });

test("a code typed by hand (any case, no dash), then Approve: the device may continue and gets its tokens", async ({ page, request }) => {
  const registered = deviceClient("Living Room TV");
  const user = newUser();
  const device = await startDevice(request, registered.client_id, "readonly readwrite");
  expect(device.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
  const pending = await poll(request, registered.client_id, device.device_code);
  expect(await pending.json()).toEqual({ error: "authorization_pending" });

  await signIn(page, user.email);
  await expect(page.getByText("Signed in as")).toBeVisible();
  await page.goto("/device");
  await page.getByLabel("Code").fill(device.user_code.replace("-", "").toLowerCase());
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByRole("heading", { name: "Allow Living Room TV to access your account?" })).toBeVisible();
  await expect(page.getByText(device.user_code)).toBeVisible();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("heading", { name: "Device connected" })).toBeVisible();
  await expect(page.getByText("it may continue")).toBeVisible();

  const tokens = await poll(request, registered.client_id, device.device_code);
  expect(tokens.status()).toBe(200);
  expect(await tokens.json()).toMatchObject({ scope: "readonly readwrite", user: `/api/user/${user.id}/`, token_type: "Bearer" });
});

test("verification_uri_complete fills the code in, through sign-in and back", async ({ page, request }) => {
  const registered = deviceClient("Command-line tool");
  const user = newUser();
  const device = await startDevice(request, registered.client_id);
  await page.goto(device.verification_uri_complete);
  await expect(page).toHaveURL(/\/login\?callbackUrl=/);
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/device\?user_code=/);
  await expect(page.getByLabel("Code")).toHaveValue(device.user_code);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("heading", { name: "Device connected" })).toBeVisible();
  expect((await poll(request, registered.client_id, device.device_code)).status()).toBe(200);
});

test("Deny: the page says the device will not get access, and the device hears access_denied", async ({ page, request }) => {
  const registered = deviceClient("Unknown gadget");
  const user = newUser();
  const device = await startDevice(request, registered.client_id);
  await signIn(page, user.email, user.password, `/login?callbackUrl=${encodeURIComponent(`/device?user_code=${device.user_code}`)}`);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("button", { name: "Deny" }).click();
  await expect(page.getByRole("heading", { name: "Access denied" })).toBeVisible();
  await expect(page.getByText("will not get access")).toBeVisible();
  const denied = await poll(request, registered.client_id, device.device_code);
  expect(denied.status()).toBe(400);
  expect(await denied.json()).toEqual({ error: "access_denied" });
});

test("a wrong code says so and keeps the person on /device", async ({ page }) => {
  const user = newUser();
  await signIn(page, user.email, user.password, "/login?callbackUrl=%2Fdevice");
  await page.getByLabel("Code").fill("BBBB-BBBB");
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toContainText("That code is not valid");
  await expect(page).toHaveURL(/\/device\?/);
  await expect(page.getByLabel("Code")).toHaveValue("BBBB-BBBB");
});
