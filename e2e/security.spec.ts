// Attacks on accounts in a real browser against the production build (docs/security.md): the open redirect
// after sign-in (docs/rules/accounts.md#return-addresses), sign-up's confirmation through the mailed link and
// its same answer for known addresses (docs/rules/accounts.md#sign-up-and-confirmation), and a signed-out
// visitor's invalid authorization request (docs/rules/tokens.md#authorization-errors).
import { expect, test, type Page } from "@playwright/test";
import { baseURL, callbackPort } from "./env";
import { CALLBACK, cli, newUser, signIn, startCallbackServer } from "./helpers";

let stopCallbackServer: () => Promise<void>;
test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
});
test.afterAll(() => stopCallbackServer());

// The attacker's site: another origin that answers (the test's callback server), so that a redirect there
// would visibly land.
const ELSEWHERE = `localhost:${callbackPort}`;
const TRICKS = [`/%09/${ELSEWHERE}/callback`, `/%5C${ELSEWHERE}/callback`, `/.//${ELSEWHERE}/callback`, `https:${ELSEWHERE}/callback`, `//${ELSEWHERE}/callback`];

async function expectHome(page: Page) {
  await expect(page).toHaveURL(`${baseURL}/`);
  await expect(page.getByRole("heading", { name: "Bundle permissions" })).toBeVisible();
}

test.describe("no open redirect after sign-in or sign-up", () => {
  test("a signed-out user who signs in through a crafted callbackUrl stays on this site", async ({ page }) => {
    const user = newUser();
    await signIn(page, user.email, user.password, `/login?callbackUrl=${TRICKS[0]}`);
    await expectHome(page);
    await expect(page.getByText("Signed in as")).toBeVisible();
  });

  test("a signed-in user sent to /login or /signup with a crafted callbackUrl is not redirected off-site", async ({ page }) => {
    const user = newUser();
    await signIn(page, user.email, user.password);
    await expect(page.getByText("Signed in as")).toBeVisible();
    for (const trick of TRICKS) {
      for (const path of ["/login", "/signup"]) {
        await page.goto(`${path}?callbackUrl=${trick}`);
        await expectHome(page);
        await expect(page.getByText("callback reached")).toHaveCount(0);
      }
    }
    // A return address on this site still works.
    await page.goto(`/login?callbackUrl=${encodeURIComponent("/settings/sharing")}`);
    await expect(page).toHaveURL(`${baseURL}/settings/sharing`);
  });
});

test.describe("sign-up confirms the address by mail, and answers the same for a known address", () => {
  async function signUp(page: Page, email: string, name: string) {
    await page.goto("/signup");
    await page.getByLabel("Name").fill(name);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("a long password");
    await page.getByRole("button", { name: "Create account" }).click();
    const answer = page.getByRole("status");
    await expect(answer).toContainText("Check your e-mail");
    return (await answer.innerText()).replace(email, "<email>");
  }

  /** Registers a password client on /settings/clients, as the signed-in person. */
  async function registerScript(page: Page) {
    await page.goto("/settings/clients");
    await page.getByLabel("Name").fill("My Script");
    await page.getByLabel("Grant type").selectOption("password");
    await page.getByRole("button", { name: "Register client" }).click();
  }

  /** The newest message to `to` with `subject`, opened in the development mailbox; returns its text part. */
  async function mailboxText(page: Page, to: string, subject: string): Promise<string> {
    await page.goto("/dev/mailbox");
    await page.getByRole("link", { name: new RegExp(`${subject}.*to ${to.replace(/[.+]/g, "\\$&")}`) }).first().click();
    await expect(page.getByRole("heading", { name: subject })).toBeVisible();
    return page.locator("pre").innerText();
  }

  test("a new address must be confirmed through the mailed link, by a POST; a known address gets the same answer and its owner a note", async ({ page, browser }) => {
    const email = `signup-${Date.now()}@example.test`;
    const newAnswer = await signUp(page, email, "Sam Signup");
    const existing = newUser("Known Person");
    const knownAnswer = await signUp(page, existing.email, "Mallory");
    expect(knownAnswer).toBe(newAnswer);

    // The new account can sign in, and is asked to confirm its address.
    await signIn(page, email, "a long password");
    await expect(page.getByText("Signed in as")).toBeVisible();
    await expect(page.getByText("Confirm your e-mail address")).toBeVisible();
    // Until then it registers no client (docs/rules/accounts.md#unconfirmed-accounts); the form says why.
    await registerScript(page);
    await expect(page.getByText("Confirm your e-mail address before you register a client")).toBeVisible();
    await expect(page.getByTestId("new-client-id")).toHaveCount(0);

    const text = await mailboxText(page, email, "Confirm your e-mail address");
    const link = /http:\/\/\S+\/verify-email\?token=[\w-]+/.exec(text)?.[0];
    expect(link, text).toBeTruthy();

    // Opening the link (as a mail scanner would) confirms nothing.
    const scanner = await browser.newContext();
    await (await scanner.newPage()).goto(link!);
    await scanner.close();
    await page.goto("/");
    await expect(page.getByText("Confirm your e-mail address")).toBeVisible();

    await page.goto(link!);
    await expect(page.getByText(`Confirm that ${email} is your address`)).toBeVisible();
    await page.getByRole("button", { name: `Confirm ${email}` }).click();
    await expect(page.getByText("Address confirmed")).toBeVisible();
    await page.goto("/");
    await expect(page.getByText("Signed in as")).toBeVisible();
    await expect(page.getByText("Confirm your e-mail address")).toHaveCount(0);
    // Used up: opening it again says the address is confirmed (the pages' wording), and offers nothing to press.
    await page.goto(link!);
    await expect(page.getByText(`${email} is already confirmed`)).toBeVisible();
    await expect(page.getByRole("button", { name: `Confirm ${email}` })).toHaveCount(0);
    // Confirmed, the same registration goes through.
    await registerScript(page);
    await expect(page.getByTestId("new-client-id")).toBeVisible();

    // The owner of the known address was told, and nothing about their account changed.
    const note = await mailboxText(page, existing.email, "Someone tried to create an account with your e-mail address");
    expect(note).toContain("Hello Known Person,");
    expect(note).not.toMatch(/token=/);
    const owner = await browser.newContext();
    const ownerPage = await owner.newPage();
    await signIn(ownerPage, existing.email, existing.password);
    await expect(ownerPage.getByText("Signed in as")).toBeVisible();
    await owner.close();
  });

  test("an unconfirmed user can ask for the link again from the home page", async ({ page }) => {
    const email = `resend-${Date.now()}@example.test`;
    await signUp(page, email, "Rae Resend");
    await signIn(page, email, "a long password");
    await page.getByRole("button", { name: "Send the link again" }).click();
    await expect(page.getByText("We sent a new link.")).toBeVisible();
    const mails = cli<{ subject: string }[]>("mail:list", "--to", email);
    expect(mails.map((mail) => mail.subject)).toEqual(["Confirm your e-mail address", "Confirm your e-mail address"]);
  });
});

test.describe("a signed-out visitor's invalid authorization request", () => {
  test("shows the error page instead of redirecting to the client", async ({ page }) => {
    const owner = newUser("Client Owner");
    const client = cli<{ client_id: string }>("client:create", "--owner", owner.email, "--name", "Bouncer", "--grant", "authorization_code", "--redirect-uri", CALLBACK);
    const url = new URL("/api/connect/oauth2/auth/", baseURL);
    url.search = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: CALLBACK, scope: "no-such-scope", state: "s1" }).toString();
    const response = await page.goto(url.toString());
    expect(response?.status()).toBe(400);
    expect(new URL(page.url()).origin).toBe(baseURL);
    await expect(page.getByRole("heading", { name: "Invalid sign-in request" })).toBeVisible();
    await expect(page.getByText("invalid_scope")).toBeVisible();
    await expect(page.getByText(client.client_id)).toBeVisible();
    await expect(page.getByText("callback reached")).toHaveCount(0);
  });
});
