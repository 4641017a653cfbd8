// OpenID Connect's prompt=none in Chromium (docs/rules/openid-connect.md#authorization-parameters, OpenID
// Connect Core 3.1.2.6): it never shows a page. Signed out it comes straight back with login_required; signed
// in, with consent_required until the person has approved, and afterwards with a code at once.
import { expect, test } from "@playwright/test";
import { approveInBrowser, CALLBACK, cli, expectAt, newUser, signIn, startCallbackServer } from "./helpers";

let stopCallbackServer: () => Promise<void>;
test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
});
test.afterAll(() => stopCallbackServer());

function authorizationUrl(clientId: string, extra: Record<string, string> = {}) {
  const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: CALLBACK, scope: "openid profile", state: "silent-1", nonce: "n-1", ...extra });
  return `/api/connect/oauth2/auth/?${query}`;
}

function codeClient(): { client_id: string } {
  return cli<{ client_id: string }>("client:create", "--owner", newUser("RP Owner").email, "--name", "Silent RP", "--grant", "authorization_code", "--redirect-uri", CALLBACK);
}

test("prompt=none signed out comes back with login_required, never the sign-in page", async ({ page }) => {
  const registered = codeClient();
  await page.goto(authorizationUrl(registered.client_id, { prompt: "none" }));
  await expectAt(page, CALLBACK);
  const url = new URL(page.url());
  expect(url.searchParams.get("error")).toBe("login_required");
  expect(url.searchParams.get("state")).toBe("silent-1");
  expect(url.searchParams.get("code")).toBeNull();
});

test("prompt=none signed in: consent_required before approval, then a code at once without any page", async ({ page }) => {
  const registered = codeClient();
  const user = newUser();
  await signIn(page, user.email);
  await expect(page.getByText("Signed in as")).toBeVisible();

  await page.goto(authorizationUrl(registered.client_id, { prompt: "none" }));
  await expectAt(page, CALLBACK);
  expect(new URL(page.url()).searchParams.get("error")).toBe("consent_required");

  await approveInBrowser(page, authorizationUrl(registered.client_id, { state: "approve-once" }));
  await page.goto(authorizationUrl(registered.client_id, { prompt: "none", state: "silent-2" }));
  await expectAt(page, CALLBACK);
  const url = new URL(page.url());
  expect(url.searchParams.get("error")).toBeNull();
  expect(url.searchParams.get("code")).toMatch(/^[\w-]{43}$/);
  expect(url.searchParams.get("state")).toBe("silent-2");
});

test("prompt=login asks for the password again, then continues the same request", async ({ page }) => {
  const registered = codeClient();
  const user = newUser();
  await signIn(page, user.email);
  await expect(page.getByText("Signed in as")).toBeVisible();
  await approveInBrowser(page, authorizationUrl(registered.client_id));

  await page.goto(authorizationUrl(registered.client_id, { prompt: "login", state: "again" }));
  await expect(page.getByRole("heading", { name: "Confirm it's you" })).toBeVisible();
  await expect(page.getByLabel("Email")).toHaveValue(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expectAt(page, CALLBACK);
  const url = new URL(page.url());
  expect(url.searchParams.get("code")).toMatch(/^[\w-]{43}$/);
  expect(url.searchParams.get("state")).toBe("again");
});
