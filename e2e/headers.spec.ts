// The security headers in Chromium against the production build: every page carries the
// Content-Security-Policy of docs/rules/operations.md#security-headers with a fresh nonce, the other security
// headers, and still works with it: no page may log a CSP violation, a console error or an uncaught exception,
// client-side navigation runs (scripts hydrate), and the consent form's 303 to the client's redirect URI
// passes form-action. Session cookies are HttpOnly and SameSite=Lax. The Security page shows a person their
// own sign-ins.
import { expect, test, type Page, type Response } from "@playwright/test";
import { CALLBACK, cli, newUser, signIn, startCallbackServer } from "./helpers";
import { checkPage } from "./page-checks";

let stopCallbackServer: () => Promise<void>;
test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
});
test.afterAll(() => stopCallbackServer());

type Problems = string[];

/** Collects every CSP violation (the DOM event and Chromium's console report), console error and exception. */
async function watch(page: Page): Promise<Problems> {
  const problems: Problems = [];
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI}`);
    });
  });
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`${page.url()}: console error: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`${page.url()}: exception: ${error.message}`));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${page.url()}: ${response.status()} for ${response.url()}`);
  });
  return problems;
}

function directives(policy: string): Map<string, string[]> {
  return new Map(policy.split(";").map((part) => part.trim().split(/\s+/)).filter((words) => words[0]).map(([name, ...values]) => [name!, values]));
}

/**
 * The page's headers are those of docs/rules/operations.md#security-headers, and every script element carries
 * the policy's nonce.
 */
async function expectSecured(page: Page, response: Response | null): Promise<string> {
  expect(response, page.url()).not.toBeNull();
  const headers = await response!.allHeaders();
  const policy = directives(headers["content-security-policy"] ?? "");
  const scriptSrc = policy.get("script-src") ?? [];
  const nonce = scriptSrc.find((value) => value.startsWith("'nonce-"))?.slice(7, -1);
  expect(nonce, `${page.url()} script-src ${scriptSrc.join(" ")}`).toMatch(/^[A-Za-z0-9+/]{22}==$/);
  expect(scriptSrc).not.toContain("'unsafe-inline'");
  expect(scriptSrc).not.toContain("'unsafe-eval'");
  expect(policy.get("frame-ancestors")).toEqual(["'none'"]);
  expect(policy.get("base-uri")).toEqual(["'none'"]);
  expect(policy.get("object-src")).toEqual(["'none'"]);
  expect(policy.get("form-action")?.[0]).toBe("'self'");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("same-origin");
  expect(headers["permissions-policy"]).toContain("camera=()");
  expect(headers["strict-transport-security"]).toBeUndefined(); // APP_URL is http here
  const scripts = await page.locator("script").evaluateAll((elements) => elements.map((element) => (element as HTMLScriptElement).nonce));
  expect(scripts.length).toBeGreaterThan(0);
  expect(scripts.every((value) => value === nonce), `${page.url()}: a script without the nonce`).toBe(true);
  return nonce!;
}

async function visit(page: Page, path: string): Promise<string> {
  const response = await page.goto(path);
  await page.waitForLoadState("networkidle");
  return expectSecured(page, response);
}

test("signed-out pages carry the policy with a fresh nonce each time, and break none of its rules", async ({ page }) => {
  const problems = await watch(page);
  const nonces = new Set<string>();
  for (const path of ["/", "/login", "/signup", "/docs", "/verify-email?token=not-a-token", "/login?callbackUrl=%2Fsettings%2Fapps"]) {
    nonces.add(await visit(page, path));
  }
  nonces.add(await visit(page, "/"));
  expect(nonces.size).toBe(7);
  // Scripts run: typing into the sign-up form and following a client-side link work.
  await page.goto("/login");
  await page.getByRole("link", { name: "Create one" }).click();
  await expect(page).toHaveURL(/\/signup/);
  expect(problems).toEqual([]);
});

test("signed-in pages, the consent page and its redirect to the client pass the policy; cookies are HttpOnly and Lax", async ({ page, context }) => {
  const problems = await watch(page);
  const user = newUser("Header Tester");
  await signIn(page, user.email, user.password);
  await expect(page.getByText("Signed in as")).toBeVisible();
  const session = (await context.cookies()).find((cookie) => cookie.name.endsWith("next-auth.session-token"));
  expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false });

  for (const path of ["/", "/settings/apps", "/settings/clients", "/settings/sharing", "/settings/security", "/device", "/docs", "/dev/mailbox"]) {
    await visit(page, path);
  }
  // Client-side navigation through the header (the router's scripts run under the policy).
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Apps" }).click();
  await expect(page).toHaveURL(/\/settings\/apps$/);
  await expect(page.getByRole("heading", { name: "Apps", level: 1 })).toBeVisible();

  // The consent page names the client's redirect origin in form-action, and its 303 lands there.
  const client = cli<{ client_id: string }>("client:create", "--owner", user.email, "--name", "Policy Client", "--grant", "authorization_code", "--redirect-uri", CALLBACK);
  const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: CALLBACK, scope: "readonly", state: "csp" });
  const consent = page.waitForResponse((response) => new URL(response.url()).pathname === "/consent");
  await page.goto(`/api/connect/oauth2/auth/?${query}`);
  const consentResponse = await consent;
  await expectSecured(page, consentResponse);
  const formAction = directives((await consentResponse.allHeaders())["content-security-policy"]!).get("form-action");
  expect(formAction).toEqual(["'self'", new URL(CALLBACK).origin]);
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByText("callback reached")).toBeVisible();
  expect(new URL(page.url()).searchParams.get("state")).toBe("csp");

  // The Security page tells the person about their sign-in and the app they allowed, with the address.
  await visit(page, "/settings/security");
  const events = page.getByRole("list", { name: "Security events" });
  await expect(events.getByText("You signed in.")).toBeVisible();
  await expect(events.getByText("You allowed “Policy Client” to access your account.")).toBeVisible();
  await expect(events.getByText(/from this computer \((127\.0\.0\.1|::1)\)/).first()).toBeVisible();
  expect(problems).toEqual([]);
});

test("a consent page whose request is not intact names no other origin in form-action", async ({ page }) => {
  const user = newUser();
  await signIn(page, user.email, user.password);
  await expect(page.getByText("Signed in as")).toBeVisible();
  const forged = Buffer.from(JSON.stringify({ redirectUri: "https://evil.example/", expiresAt: Date.now() + 60_000 })).toString("base64url");
  const response = await page.goto(`/consent?request=${forged}.not-a-mac`);
  const formAction = directives((await response!.allHeaders())["content-security-policy"]!).get("form-action");
  expect(formAction).toEqual(["'self'"]);
  await expect(page.getByRole("heading", { name: "Request expired" })).toBeVisible();
});

// docs/rules/openid-connect.md#logout: the confirmation page of the logout endpoint, its form's 303 to the
// application's registered post-logout address (named in form-action, as the consent page names its redirect
// URI), and the signed-out page.
test("the logout confirmation page passes the policy and axe; Sign out lands at the registered address with state; the signed-out page too", async ({ page, context }) => {
  const problems = await watch(page);
  const user = newUser("Logout Tester");
  const signedOut = CALLBACK.replace("/callback", "/signed-out");
  const client = cli<{ client_id: string }>("client:create", "--owner", user.email, "--name", "Logout Client", "--grant", "authorization_code", "--redirect-uri", CALLBACK, "--post-logout-redirect-uri", signedOut);
  await signIn(page, user.email, user.password);
  await expect(page.getByText("Signed in as")).toBeVisible();

  const query = new URLSearchParams({ client_id: client.client_id, post_logout_redirect_uri: signedOut, state: "bye" });
  const confirmation = page.waitForResponse((response) => new URL(response.url()).pathname === "/logout");
  await page.goto(`/api/connect/oauth2/logout/?${query}`);
  const confirmationResponse = await confirmation;
  await page.waitForLoadState("networkidle");
  await expectSecured(page, confirmationResponse);
  expect(directives((await confirmationResponse.allHeaders())["content-security-policy"]!).get("form-action")).toEqual(["'self'", new URL(signedOut).origin]);
  await expect(page.getByRole("heading", { name: "Sign out of Bundle permissions?", level: 1 })).toBeVisible();
  await expect(page.getByText("Logout Client")).toBeVisible();
  const form = page.locator('form[action="/api/connect/oauth2/logout/confirm/"]');
  await expect(form.locator('input[name="csrf"]')).toHaveCount(1);
  await checkPage(page, "logout-confirmation");

  await form.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByText("callback reached")).toBeVisible();
  const landed = new URL(page.url());
  expect(landed.pathname).toBe("/signed-out");
  expect(landed.searchParams.get("state")).toBe("bye");
  expect((await context.cookies()).find((cookie) => cookie.name.endsWith("next-auth.session-token"))).toBeUndefined();

  await visit(page, "/logout/done");
  await expect(page.getByRole("heading", { name: "You are signed out", level: 1 })).toBeVisible();
  await expect(page.getByRole("link", { name: "Sign in again" })).toBeVisible();
  await checkPage(page, "logout-done");
  expect(problems).toEqual([]);
});
