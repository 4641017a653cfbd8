// The pages around an account (docs/rules/pages.md), at desktop and phone sizes: the header (current page
// marked, /docs linked, a menu on phones), the landing page, sign-in that names the app it is for, password
// reset by e-mail end to end through /dev/mailbox, and the error pages in the site's layout with the OAuth
// error code and the client_id.
import { expect, test, type Page } from "@playwright/test";
import { baseURL } from "./env";
import { CALLBACK, cliAsync, linkIn, newUsers, readMailbox, signInAt } from "./helpers";
import { checkPage, contextOptions, isPhone, openMenu } from "./page-checks";

const authorizeUrl = (clientId: string, extra: Record<string, string> = {}) =>
  `/api/connect/oauth2/auth/?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: CALLBACK, scope: "readonly", state: "st", ...extra })}`;

type Look = Awaited<ReturnType<typeof look>>;

/** The same look: the same fonts, and colours within rounding (one style sheet writes lab(), the other oklch()). */
function expectSameLook(actual: Look, expected: Look) {
  expect({ font: actual.font, size: actual.size, weight: actual.weight }).toEqual({ font: expected.font, size: expected.size, weight: expected.weight });
  for (const key of ["background", "color"] as const) {
    const difference = Math.max(...actual[key].map((channel, i) => Math.abs(channel - expected[key][i]!)));
    expect(difference, `${key}: ${actual[key].join(",")} against ${expected[key].join(",")}`).toBeLessThanOrEqual(2);
  }
}

/** The computed look of a page's heading, colours as sRGB (however the style sheet wrote them), to compare pages. */
const look = (page: Page) =>
  page.locator("h1").first().evaluate((element) => {
    const canvas = document.createElement("canvas").getContext("2d", { willReadFrequently: true })!;
    const rgb = (color: string) => {
      canvas.clearRect(0, 0, 1, 1);
      canvas.fillStyle = color;
      canvas.fillRect(0, 0, 1, 1);
      return [...canvas.getImageData(0, 0, 1, 1).data.slice(0, 3)];
    };
    const style = getComputedStyle(element);
    return { font: style.fontFamily, size: style.fontSize, weight: style.fontWeight, background: rgb(getComputedStyle(document.body).backgroundColor), color: rgb(style.color) };
  });

test("signed out: the landing page says what the service does for a person; the header links Docs; the pages around sign-in", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Bundle permissions", level: 1 })).toBeVisible();
  await expect(page.getByText("Decide which apps may use your account, and who may read your bundles.")).toBeVisible();
  await expect(page.getByText("Sign in to apps with one account.")).toBeVisible();
  // The skip link is the first stop of the Tab key and leads past the header.
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to main content" });
  await expect(skip).toBeFocused();
  await checkPage(page, "home-signed-out");
  await openMenu(page);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Docs" }).click();
  await expect(page.getByRole("heading", { name: "Developer documentation" })).toBeVisible();
  await openMenu(page);
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Docs" })).toHaveAttribute("aria-current", "page");
  await checkPage(page, "docs");
  for (const [path, heading, name] of [
    ["/signup", "Create account", "signup"],
    ["/forgot-password", "Forgot your password?", "forgot-password"],
    ["/reset-password?token=not-a-token", "Choose a new password", "reset-password-invalid"],
    ["/verify-email?token=not-a-token", "Confirm your e-mail address", "verify-email-invalid"],
  ] as const) {
    await page.goto(path);
    await expect(page.getByRole("heading", { name: heading, level: 1 })).toBeVisible();
    await checkPage(page, name, { assets: false });
  }
});

test("the header marks the current page and folds into a menu on a phone, in one row", async ({ page }) => {
  const [user] = await newUsers("Hana Header");
  await signInAt(page, user, "/settings/apps");
  const header = page.getByRole("banner");
  const height = (await header.boundingBox())!.height;
  // One row: about the height of one line of links, whatever the width.
  expect(height).toBeLessThan(70);
  if (isPhone()) {
    const menu = page.getByRole("button", { name: "Menu" });
    await expect(menu).toHaveAttribute("aria-expanded", "false");
    await expect(page.getByRole("navigation", { name: "Main" })).toBeHidden();
    await menu.click();
    await expect(menu).toHaveAttribute("aria-expanded", "true");
    await checkPage(page, "header-menu-open", { assets: false });
  }
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(nav.getByRole("link", { name: "Apps" })).toHaveAttribute("aria-current", "page");
  await expect(nav.getByRole("link", { name: "Sharing" })).not.toHaveAttribute("aria-current", "page");
  await expect(nav.getByText(user.email)).toBeVisible();
  await nav.getByRole("link", { name: "Sharing" }).click();
  await expect(page).toHaveURL(/\/settings\/sharing$/);
  await openMenu(page);
  await expect(nav.getByRole("link", { name: "Sharing" })).toHaveAttribute("aria-current", "page");
  await expect(nav.getByRole("link", { name: "Apps" })).not.toHaveAttribute("aria-current", "page");

  // The home page explains both ways of signing out.
  await page.goto("/");
  await expect(page.getByText("ends your session in this browser only")).toBeVisible();
  await expect(page.getByText("ends every session of your account, in every browser and on every device")).toBeVisible();
  await checkPage(page, "home-signed-in");
});

test("sign-in from an authorization request names the app, focuses the e-mail, and checks required fields in the browser", async ({ page }) => {
  const [owner, user] = await newUsers("Pat Maker", "Sue Signin");
  const client = await cliAsync<{ client_id: string }>("client:create", "--owner", owner.email, "--name", "Photo Printer", "--grant", "authorization_code", "--redirect-uri", CALLBACK);
  await page.goto(authorizeUrl(client.client_id));
  await expect(page).toHaveURL(/\/login\?callbackUrl=/);
  await expect(page.getByText("Sign in to continue to Photo Printer")).toBeVisible();
  await expect(page.getByLabel("Email")).toBeFocused();
  await checkPage(page, "login-for-app");

  // Empty fields never reach the server: the browser stops the submit.
  let posted = 0;
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().includes("/api/auth/callback")) posted++;
  });
  await page.getByRole("button", { name: "Sign in" }).click();
  expect(await page.getByLabel("Email").evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true);
  await page.getByLabel("Email").fill("not an address");
  await page.getByRole("button", { name: "Sign in" }).click();
  expect(await page.getByLabel("Email").evaluate((input: HTMLInputElement) => input.validity.typeMismatch)).toBe(true);
  expect(posted).toBe(0);

  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill("wrong password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toHaveText(/do not match/);
  expect(posted).toBe(1);
  await expect(page.getByRole("link", { name: "Forgot your password?" })).toHaveAttribute("href", `/forgot-password?email=${encodeURIComponent(user.email)}`);
});

test("password reset by e-mail: the same answer for any address, a link that only a POST uses, every session signed out, every app disconnected", async ({ page, browser, request }) => {
  const [user, reader] = await newUsers("Rosa Reset", "Mail Reader");
  // A token of the user's own script, from before the reset.
  const script = await cliAsync<{ client_id: string; client_secret: string }>("client:create", "--owner", user.email, "--name", "Rosa's script", "--grant", "password");
  const issued = await request.post("/api/connect/oauth2/token/", {
    data: { grant_type: "password", client_id: script.client_id, client_secret: script.client_secret, username: user.email, password: user.password },
  });
  expect(issued.status()).toBe(200);
  const appToken = (await issued.json()).access_token as string;
  expect((await request.get(`/api/user/${user.id}/`, { headers: { authorization: `Bearer ${appToken}` } })).status()).toBe(200);
  // A session of the user's from before the reset, on another device.
  const before = await browser.newContext(contextOptions());
  const beforePage = await before.newPage();
  await signInAt(beforePage, user, "/settings/apps");

  await page.goto("/login");
  await page.getByLabel("Email").fill(user.email);
  await page.getByRole("link", { name: "Forgot your password?" }).click();
  await expect(page.getByRole("heading", { name: "Forgot your password?" })).toBeVisible();
  await expect(page.getByLabel("Email")).toHaveValue(user.email);
  await page.getByRole("button", { name: "Send me a reset link" }).click();
  const answer = page.getByRole("status").filter({ hasText: "Check your e-mail" });
  await expect(answer).toBeVisible();
  const known = (await answer.innerText()).replace(user.email, "<address>");
  await checkPage(page, "forgot-password-sent", { assets: false });
  // An address without an account gets the same answer.
  await page.goto("/forgot-password");
  const nobody = `nobody-${Date.now()}@example.test`;
  await page.getByLabel("Email").fill(nobody);
  await page.getByRole("button", { name: "Send me a reset link" }).click();
  await expect(answer).toBeVisible();
  expect((await answer.innerText()).replace(nobody, "<address>")).toBe(known);

  // The mail, read in the development mailbox by someone signed in.
  const mailbox = await browser.newContext(contextOptions());
  const mailboxPage = await mailbox.newPage();
  await signInAt(mailboxPage, reader, "/dev/mailbox");
  await checkPage(mailboxPage, "mailbox");
  const text = await readMailbox(mailboxPage, user.email, "Reset your password");
  expect(text).toContain("Bundle permissions");
  const link = linkIn(text, "/reset-password?token=");
  expect(text.split(link)).toHaveLength(2);
  await expect(mailboxPage.getByRole("link", { name: /Reset your password.*to nobody-/ })).toHaveCount(0);

  // Opening the link (as a mail scanner would) changes nothing.
  await page.goto(link);
  await page.goto(link);
  await expect(page.getByText(`For the account ${user.email}`)).toBeVisible();
  await expect(page.getByLabel("New password")).toBeFocused();
  // It says what a reset does besides (docs/rules/accounts.md#password-reset): every session signed out, every
  // app disconnected.
  await expect(page.getByText("Changing your password signs you out everywhere and disconnects every app")).toBeVisible();
  await checkPage(page, "reset-password");
  await page.getByLabel("New password").fill("my new password");
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByText("Your password was changed")).toBeVisible();
  await expect(page.getByText("every app you had let use your account was disconnected")).toBeVisible();
  // An app's token from before the reset no longer works.
  expect((await request.get(`/api/user/${user.id}/`, { headers: { authorization: `Bearer ${appToken}` } })).status()).toBe(401);

  // The session from before is signed out; the old password no longer works; the new one does.
  await beforePage.goto("/settings/apps");
  await expect(beforePage).toHaveURL(/\/login\?callbackUrl=/);
  await page.goto(link);
  await expect(page.getByText("This link was already used")).toBeVisible();
  await page.goto("/login");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toHaveText(/do not match/);
  await page.getByLabel("Password").fill("my new password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText("Signed in as")).toBeVisible();
  await Promise.all([before.close(), mailbox.close()]);
});

test("error pages use the site's layout, fonts and dark mode, and give developers the error code and the client_id", async ({ page }) => {
  await page.goto("/");
  const site = await look(page);
  await page.emulateMedia({ colorScheme: "dark" });
  const siteDark = await look(page);
  await page.emulateMedia({ colorScheme: "light" });
  expect(siteDark.background).not.toEqual(site.background);

  const response = await page.goto(authorizeUrl("no-such-client"));
  expect(response?.status()).toBe(400);
  await expect(page.getByRole("heading", { name: "Unknown application" })).toBeVisible();
  const developers = page.getByRole("region", { name: "For developers" });
  await expect(developers.getByText("invalid_client")).toBeVisible();
  await expect(developers.getByText("no-such-client")).toBeVisible();
  await expect(page.getByRole("link", { name: "Bundle permissions" })).toHaveAttribute("href", "/");
  expectSameLook(await look(page), site);
  await page.emulateMedia({ colorScheme: "dark" });
  expectSameLook(await look(page), siteDark);
  await page.emulateMedia({ colorScheme: "light" });
  await checkPage(page, "error-authorization");

  const missing = await page.goto("/no-such-page");
  expect(missing?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await expect(page.getByRole("banner")).toBeVisible();
  expectSameLook(await look(page), site);
  await checkPage(page, "not-found");
  await page.goto(`${baseURL}/settings/clients`);
  await expect(page).toHaveURL(/\/login\?callbackUrl=%2Fsettings%2Fclients/);
});

test("sign-up: an error at its field keeps what was typed; the answer; the mailed link confirms only on the button", async ({ page }) => {
  const email = `sign-up-${Date.now()}@example.test`;
  await page.goto("/signup");
  await page.getByLabel("Name").fill("Nina New");
  // The browser takes "nina@example" as an address; the service wants a domain with a dot: said at the field.
  await page.getByLabel("Email").fill("nina@example");
  await page.getByLabel("Password").fill("a long password");
  await page.getByRole("button", { name: "Create account" }).click();
  const emailField = page.getByLabel("Email");
  await expect(emailField).toHaveAccessibleDescription("Email must be an e-mail address.");
  await expect(emailField).toHaveAttribute("aria-invalid", "true");
  await expect(emailField).toBeFocused();
  await expect(emailField).toHaveValue("nina@example");
  await expect(page.getByLabel("Name")).toHaveValue("Nina New");
  await expect(page.getByRole("main").getByRole("alert")).toHaveCount(0);
  await checkPage(page, "signup-field-error", { assets: false });

  await emailField.fill(email);
  await page.getByLabel("Password").fill("a long password");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Check your e-mail" })).toContainText(`We sent a message to ${email}.`);
  await checkPage(page, "signup-sent", { assets: false });

  // Signed in (an unconfirmed account may), the person reads the mail and opens its link: nothing changes yet.
  await page.getByRole("link", { name: "Continue to sign in" }).click();
  await expect(page.getByLabel("Email")).toHaveValue(email);
  await page.getByLabel("Password").fill("a long password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText("Signed in as")).toBeVisible();
  const link = linkIn(await readMailbox(page, email, "Confirm your e-mail address"), "/verify-email?token=");
  await page.goto(link);
  await page.goto(link);
  await expect(page.getByText(`Confirm that ${email} is your address, for the account “Nina New”`)).toBeVisible();
  await checkPage(page, "verify-email", { assets: false });
  await page.getByRole("button", { name: `Confirm ${email}` }).click();
  await expect(page.getByRole("status").filter({ hasText: "Address confirmed" })).toContainText(`${email} is confirmed.`);
  await checkPage(page, "verify-email-done", { assets: false });
  await page.reload();
  await expect(page.getByText(`${email} is already confirmed.`)).toBeVisible();
});
