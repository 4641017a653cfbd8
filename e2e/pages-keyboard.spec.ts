// Keyboard and assistive technology, result pages and error pages (docs/rules/pages.md#keyboard-and-assistive-technology,
// docs/rules/pages.md#next-steps, docs/rules/pages.md#security-activity, docs/rules/pages.md#error-pages), at
// desktop and phone sizes: the page's main field has the focus on arrival; Escape closes the phone menu; every
// button's accessible name holds its visible label; every result page offers the next step; the security
// activity in words, with the pages' dates and readable addresses; the wrong-redirect page shows what it
// received, and what is registered to the client's owner only.
import { expect, test, type Page } from "@playwright/test";
import { CALLBACK, cli, newUsers, signInAt, type User } from "./helpers";
import { checkPage, contextOptions, isPhone } from "./page-checks";

/** Every button and link on the page whose aria-label does not contain its visible text (WCAG 2.5.3). */
async function labelsNotInNames(page: Page): Promise<string[]> {
  return page.locator("button[aria-label], a[aria-label]").evaluateAll((elements) =>
    elements
      .filter((element) => (element as HTMLElement).offsetParent !== null)
      .map((element) => ({ label: (element as HTMLElement).innerText.replace(/\s+/g, " ").trim(), name: element.getAttribute("aria-label") ?? "" }))
      .filter(({ label, name }) => label !== "" && !name.toLowerCase().includes(label.toLowerCase()))
      .map(({ label, name }) => `“${label}” named “${name}”`),
  );
}

test("the main field has the focus on arrival: the sign-in e-mail, the device code", async ({ browser }) => {
  const [dana] = await newUsers("Dana Device");
  const context = await browser.newContext(contextOptions());
  const page = await context.newPage();
  await page.goto("/login");
  await expect(page.getByLabel("Email")).toBeFocused();
  await signInAt(page, dana, "/device");
  await expect(page.getByLabel("Code")).toBeFocused();
  await page.keyboard.type("wdjb-mjht");
  await expect(page.getByLabel("Code")).toHaveValue("wdjb-mjht");
  await context.close();
});

test("Escape closes the phone menu and gives the focus back to its button", async ({ page }) => {
  await page.goto("/");
  const menu = page.getByRole("button", { name: "Menu" });
  if (!isPhone()) {
    // At the desktop size the links are always shown, and there is no menu to close.
    await expect(menu).toBeHidden();
    return;
  }
  await menu.click();
  await expect(menu).toHaveAttribute("aria-expanded", "true");
  const docs = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Docs" });
  await expect(docs).toBeVisible();
  await docs.focus();
  await page.keyboard.press("Escape");
  await expect(menu).toHaveAttribute("aria-expanded", "false");
  await expect(docs).toBeHidden();
  await expect(menu).toBeFocused();
});

test("every button's accessible name holds its visible label, on the sharing and clients pages", async ({ browser }) => {
  const [owen, fay] = await newUsers("Owen Owner", "Fay Friend");
  const bundle = cli<{ id: number }>("bundle:create", "--owner", owen.email, "--name", "Maps");
  cli("client:create", "--owner", owen.email, "--name", "Map Printer", "--grant", "authorization_code", "--redirect-uri", CALLBACK);
  const context = await browser.newContext(contextOptions());
  const page = await context.newPage();
  await signInAt(page, owen, "/settings/sharing");
  await page.getByLabel("Your bundle", { exact: true }).selectOption(String(bundle.id));
  await page.getByLabel("E-mail of the person to let in").fill(fay.email);
  await page.getByRole("button", { name: "Let in", exact: true }).click();
  await expect(page.getByRole("status").filter({ hasText: "can now read “Maps”" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Delete bundle Maps" })).toBeVisible();
  await expect(page.getByRole("button", { name: `Revoke Fay Friend's access to Maps` })).toBeVisible();
  expect(await labelsNotInNames(page)).toEqual([]);
  await page.goto("/settings/clients");
  await expect(page.getByRole("button", { name: "Rotate secret of Map Printer" })).toBeVisible();
  expect(await labelsNotInNames(page)).toEqual([]);
  const friend = await context.browser()!.newContext(contextOptions());
  const friendPage = await friend.newPage();
  await signInAt(friendPage, fay, "/settings/sharing");
  await expect(friendPage.getByRole("button", { name: "Give up access to Maps" })).toBeVisible();
  expect(await labelsNotInNames(friendPage)).toEqual([]);
  await Promise.all([context.close(), friend.close()]);
});

async function signedInPage(browser: import("@playwright/test").Browser, user: User, path: string) {
  const context = await browser.newContext(contextOptions());
  const page = await context.newPage();
  await signInAt(page, user, path);
  return { page, close: () => context.close() };
}

test("every result page offers the next step: device connected or denied, a request expired, a link used, signed out", async ({ browser }) => {
  const [rae] = await newUsers("Rae Result");
  const { page, close } = await signedInPage(browser, rae, "/");
  await page.goto("/device?done=approved");
  await expect(page.getByRole("heading", { name: "Device connected" })).toBeVisible();
  await expect(page.getByRole("link", { name: "connect another device" })).toHaveAttribute("href", "/device");
  await checkPage(page, "device-connected", { assets: false });
  await page.goto("/device?done=denied");
  await expect(page.getByRole("heading", { name: "Access denied" })).toBeVisible();
  await expect(page.getByRole("link", { name: "type its new code here" })).toHaveAttribute("href", "/device");
  await checkPage(page, "device-denied", { assets: false });
  await page.goto("/consent?request=no-such-request");
  await expect(page.getByRole("heading", { name: "Request expired" })).toBeVisible();
  await expect(page.getByRole("main").getByRole("link", { name: "Apps" })).toHaveAttribute("href", "/settings/apps");
  await page.goto("/redeem?token=not-a-token");
  await expect(page.getByRole("main").getByRole("alert")).toContainText("This link is not valid");
  await expect(page.getByRole("link", { name: "see your bundles and requests on the Sharing page" })).toHaveAttribute("href", "/settings/sharing");
  await checkPage(page, "redeem-invalid-next", { assets: false });

  // Signing out lands on the home page, which says so and offers to sign in again.
  if (isPhone()) await page.getByRole("button", { name: "Menu" }).click();
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page.getByRole("status").filter({ hasText: "You signed out of this browser." })).toBeVisible();
  await expect(page.getByRole("main").getByRole("link", { name: "Sign in" })).toBeVisible();
  await checkPage(page, "signed-out", { assets: false });
  await close();
});

test("security activity: one row per event, in words, with the pages' dates and readable addresses", async ({ browser }) => {
  const [sam] = await newUsers("Sam Secure");
  const { page, close } = await signedInPage(browser, sam, "/settings/security");
  const events = page.getByRole("list", { name: "Security events" });
  await expect(events.getByText("You signed in.")).toBeVisible();
  const row = events.getByRole("listitem").first();
  await expect(row).toContainText(/from this computer \((127\.0\.0\.1|::1)\)/);
  // The one date format of the pages (month in words, zone named), never an ISO timestamp.
  await expect(row.locator("time")).toHaveText(/(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)/);
  await expect(row).not.toContainText(/\d{4}-\d\d-\d\d/);
  await checkPage(page, "security-activity", { assets: false });
  await close();
});

test("the wrong-redirect page shows the address received, and the registered ones to the client's owner only", async ({ browser }) => {
  const [olga, ursula] = await newUsers("Olga Owner", "Ursula User");
  const client = cli<{ client_id: string }>("client:create", "--owner", olga.email, "--name", "Redirect Check", "--grant", "authorization_code", "--redirect-uri", CALLBACK);
  const wrong = `${CALLBACK}/elsewhere`;
  const url = `/api/connect/oauth2/auth/?${new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: wrong, scope: "readonly" })}`;
  const other = await signedInPage(browser, ursula, "/");
  await other.page.goto(url);
  await expect(other.page.getByRole("heading", { name: "Invalid redirect URI" })).toBeVisible();
  const facts = other.page.getByRole("region", { name: "For developers" });
  await expect(facts).toContainText(`redirect_uri received${wrong}`);
  await expect(facts).not.toContainText("Registered");
  const owner = await signedInPage(browser, olga, "/");
  await owner.page.goto(url);
  const ownerFacts = owner.page.getByRole("region", { name: "For developers" });
  await expect(ownerFacts).toContainText(`Registered (you own this client)${CALLBACK}`);
  await checkPage(owner.page, "invalid-redirect-owner", { assets: false });
  await Promise.all([other.close(), owner.close()]);
});
