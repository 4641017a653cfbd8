// Sharing done entirely in the browser (docs/rules/pages.md#sharing), at desktop and phone sizes: create a
// bundle, ask its owner for access, the mail in /dev/mailbox, accept, both sides see it, revoke; letting
// someone in directly; errors at the field with what was typed kept; and every confirmation's Cancel changing
// nothing.
import { expect, test, type Browser, type Page } from "@playwright/test";
import { linkIn, newUsers, readMailbox, signInAt, type User } from "./helpers";
import { checkPage, contextOptions } from "./page-checks";

const SHARING = "/settings/sharing";

async function signedIn(browser: Browser, user: User, path = SHARING): Promise<{ page: Page; close: () => Promise<void> }> {
  const context = await browser.newContext(contextOptions());
  const page = await context.newPage();
  await signInAt(page, user, path);
  return { page, close: () => context.close() };
}

const status = (page: Page, text: string | RegExp) => page.getByRole("status").filter({ hasText: text });

async function createBundle(page: Page, name: string): Promise<number> {
  await page.getByLabel("Bundle name").fill(name);
  await page.getByRole("button", { name: "Create bundle" }).click();
  const done = status(page, `Created “${name}”`);
  await expect(done).toBeVisible();
  return Number(/bundle id (\d+)/.exec(await done.innerText())![1]);
}

test("the whole loop with pages only: create a bundle, ask, the mail, accept, both sides see it, revoke", async ({ browser }) => {
  const [olive, rita] = await newUsers("Olive Owner", "Rita Requester");
  const owner = await signedIn(browser, olive);
  await expect(owner.page.getByRole("heading", { name: "Sharing", level: 1 })).toBeVisible();
  await checkPage(owner.page, "sharing-empty");
  const bundleId = await createBundle(owner.page, "Holiday photos");
  await expect(owner.page.getByRole("heading", { name: "Holiday photos" })).toBeVisible();
  await expect(owner.page.getByText("Only you can read it.")).toBeVisible();

  // Rita asks, with the bundle's id; "Person to let in" is her own e-mail already.
  const asker = await signedIn(browser, rita);
  await asker.page.getByLabel("Owner's e-mail").fill(olive.email);
  await asker.page.getByLabel("Bundle id or link").fill(String(bundleId));
  await expect(asker.page.getByLabel("Person to let in", { exact: true })).toHaveValue(rita.email);
  await asker.page.getByRole("button", { name: "Send request" }).click();
  await expect(status(asker.page, `Request sent: ${olive.email} gets an e-mail`)).toBeVisible();
  const sent = asker.page.getByRole("region", { name: "Requests you sent" });
  await expect(sent.getByText("Waiting for an answer")).toBeVisible();
  await expect(sent.getByRole("button", { name: "Withdraw your request for Holiday photos" })).toBeVisible();

  // The owner sees the request on the page (with the requester's e-mail:
  // docs/rules/permission-requests.md#who-sees-an-e-mail-address) and in the mail.
  await owner.page.reload();
  const toYou = owner.page.getByRole("region", { name: "Requests to you" });
  await expect(toYou.getByText(`Rita Requester (${rita.email}) asks you for access to “Holiday photos”.`)).toBeVisible();
  await checkPage(owner.page, "sharing-request-received");
  const mail = await readMailbox(owner.page, olive.email, "Rita Requester asks you for access to your bundle");
  await checkPage(owner.page, "mailbox-message");
  expect(mail).toContain("Bundle permissions");
  expect(mail).toContain(`Rita Requester (${rita.email}) asks you for access to your bundle “Holiday photos”.`);
  const link = linkIn(mail, "/redeem?token=");
  expect(mail.split(link)).toHaveLength(2); // the text version gives the link once

  await owner.page.goto(link);
  await expect(owner.page.getByText(`Rita Requester (${rita.email})`).first()).toBeVisible();
  await checkPage(owner.page, "redeem-pending");
  // Decline asks first; Cancel leaves the request as it was.
  await owner.page.getByRole("button", { name: "Decline" }).click();
  const declineDialog = owner.page.getByRole("dialog", { name: "Decline this request?" });
  await expect(declineDialog).toContainText("Nobody gets access, and this link stops working.");
  await declineDialog.getByRole("button", { name: "Cancel" }).click();
  await owner.page.reload();
  await expect(owner.page.getByRole("button", { name: "Accept" })).toBeEnabled();
  await owner.page.getByRole("button", { name: "Accept" }).click();
  await expect(owner.page.getByText("Accepted")).toBeVisible();
  // A reload shows the accepted request, not an error.
  await owner.page.reload();
  await expect(owner.page.getByText("Accepted")).toBeVisible();
  await expect(owner.page.getByText(/can read your bundle “Holiday photos” since/)).toBeVisible();
  await expect(owner.page.getByRole("main").getByRole("alert")).toHaveCount(0);
  await expect(owner.page.getByRole("button", { name: "Accept" })).toHaveCount(0);
  await checkPage(owner.page, "redeem-accepted");

  // Both sides see it.
  await owner.page.goto(SHARING);
  const readers = owner.page.getByRole("list", { name: "Who may read Holiday photos" });
  await expect(readers.getByText(`Rita Requester (user ${rita.id})`)).toBeVisible();
  await asker.page.reload();
  const shared = asker.page.getByRole("list", { name: "Bundles shared with you" });
  await expect(shared.getByText("Holiday photos")).toBeVisible();
  await expect(shared.getByText(`owned by Olive Owner (user ${olive.id})`)).toBeVisible();
  await expect(asker.page.getByRole("region", { name: "Requests you sent" }).getByText("Accepted")).toBeVisible();
  await checkPage(asker.page, "sharing-shared-with-you");

  // Revoke: Cancel changes nothing; the confirmed revoke says what happened.
  const revoke = owner.page.getByRole("button", { name: "Revoke Rita Requester's access to Holiday photos" });
  await revoke.click();
  const dialog = owner.page.getByRole("dialog", { name: "Revoke Rita Requester's access to “Holiday photos”?" });
  await expect(dialog).toBeVisible();
  await checkPage(owner.page, "sharing-confirm-revoke", { assets: false });
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
  await owner.page.reload();
  await expect(readers.getByText(`Rita Requester (user ${rita.id})`)).toBeVisible();
  await revoke.click();
  await dialog.getByRole("button", { name: "Revoke access" }).click();
  await expect(status(owner.page, `Rita Requester (user ${rita.id}) can no longer read “Holiday photos”.`)).toBeVisible();
  await expect(owner.page.getByText("Only you can read it.")).toBeVisible();
  await asker.page.reload();
  await expect(asker.page.getByText("Nobody has let you into a bundle yet.")).toBeVisible();
  await Promise.all([owner.close(), asker.close()]);
});

test("letting someone in directly; errors at the field keep what was typed; the browser checks required fields first", async ({ browser }) => {
  const [owen, fay, stranger] = await newUsers("Owen Owner", "Fay Friend", "Sam Stranger");
  const owner = await signedIn(browser, owen);
  const { page } = owner;
  await createBundle(page, "Recipes");
  const drawingsId = await createBundle(page, "Drawings");

  // Required fields are checked by the browser: nothing is sent.
  await page.getByRole("button", { name: "Let in", exact: true }).click();
  expect(await page.getByLabel("E-mail of the person to let in").evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true);
  await expect(page.getByRole("main").getByRole("alert")).toHaveCount(0);

  // An address without an account: the message is at the field, and the form keeps the bundle and the address.
  await page.getByLabel("Your bundle", { exact: true }).selectOption({ label: `Drawings (id ${drawingsId})` });
  await page.getByLabel("E-mail of the person to let in").fill("nobody-here@example.test");
  await page.getByRole("button", { name: "Let in", exact: true }).click();
  const emailField = page.getByLabel("E-mail of the person to let in");
  await expect(emailField).toHaveAccessibleDescription("No account uses this e-mail address.");
  await expect(emailField).toHaveAttribute("aria-invalid", "true");
  await expect(emailField).toBeFocused();
  await expect(emailField).toHaveValue("nobody-here@example.test");
  await expect(page.getByLabel("Your bundle", { exact: true })).toHaveValue(String(drawingsId));
  await checkPage(page, "sharing-field-error", { assets: false });

  await emailField.fill(fay.email);
  await page.getByRole("button", { name: "Let in", exact: true }).click();
  await expect(status(page, `${fay.email} can now read “Drawings”.`)).toBeVisible();
  await expect(page.getByRole("list", { name: "Who may read Drawings" }).getByText(`Fay Friend (user ${fay.id})`)).toBeVisible();
  await expect(emailField).toHaveValue("");

  // Asking someone who does not own the bundle: the one answer that reveals nothing, at the owner's field;
  // every field keeps what was typed. A malformed bundle id is answered at its own field.
  const asker = await signedIn(browser, stranger);
  await asker.page.getByLabel("Owner's e-mail").fill(fay.email);
  await asker.page.getByLabel("Bundle id or link").fill(String(drawingsId));
  await asker.page.getByRole("button", { name: "Send request" }).click();
  const ownerField = asker.page.getByLabel("Owner's e-mail");
  await expect(ownerField).toHaveAccessibleDescription(/This person cannot let anyone into this bundle/);
  await expect(ownerField).toHaveValue(fay.email);
  await expect(asker.page.getByLabel("Bundle id or link")).toHaveValue(String(drawingsId));
  await expect(asker.page.getByLabel("Person to let in", { exact: true })).toHaveValue(stranger.email);
  await asker.page.getByLabel("Owner's e-mail").fill(owen.email);
  await asker.page.getByLabel("Bundle id or link").fill("the drawings");
  await asker.page.getByRole("button", { name: "Send request" }).click();
  await expect(asker.page.getByLabel("Bundle id or link")).toHaveAccessibleDescription(/Enter the bundle's id/);
  // The link works as well as the id.
  await asker.page.getByLabel("Bundle id or link").fill(`${new URL(page.url()).origin}/api/bundle/${drawingsId}/`);
  await asker.page.getByRole("button", { name: "Send request" }).click();
  await expect(status(asker.page, "Request sent")).toBeVisible();
  await Promise.all([owner.close(), asker.close()]);
});

test("nothing is done to a bundle the person did not pick: “Let in” starts at “Choose…” and keeps the bundle chosen", async ({ browser }) => {
  const [owen, fay, gus] = await newUsers("Owen Owner", "Fay Friend", "Gus Guest");
  const owner = await signedIn(browser, owen);
  const { page } = owner;
  const bundle = page.getByLabel("Your bundle", { exact: true });
  const firstId = await createBundle(page, "Letters");
  await expect(bundle).toHaveValue("");
  await expect(bundle.locator("option:checked")).toHaveText("Choose…");
  const secondId = await createBundle(page, "Maps");
  await expect(bundle).toHaveValue("");

  // Without a choice the browser refuses to send the form.
  await page.getByLabel("E-mail of the person to let in").fill(fay.email);
  await page.getByRole("button", { name: "Let in", exact: true }).click();
  expect(await bundle.evaluate((select: HTMLSelectElement) => select.validity.valueMissing)).toBe(true);
  await expect(page.getByRole("list", { name: "Who may read Letters" })).toHaveCount(0);

  // Into the second bundle, twice: after the first, the form still says "Maps", so the second goes there too.
  await bundle.selectOption({ label: `Maps (id ${secondId})` });
  await page.getByRole("button", { name: "Let in", exact: true }).click();
  await expect(status(page, `${fay.email} can now read “Maps”.`)).toBeVisible();
  await expect(bundle).toHaveValue(String(secondId));
  await expect(page.getByLabel("E-mail of the person to let in")).toHaveValue("");
  // Creating another bundle meanwhile changes nothing of the choice.
  await createBundle(page, "Poems");
  await expect(bundle).toHaveValue(String(secondId));
  await page.getByLabel("E-mail of the person to let in").fill(gus.email);
  await page.getByRole("button", { name: "Let in", exact: true }).click();
  await expect(status(page, `${gus.email} can now read “Maps”.`)).toBeVisible();
  await checkPage(page, "sharing-let-in-kept", { assets: false });
  const maps = page.getByRole("list", { name: "Who may read Maps" });
  await expect(maps.getByText(`Fay Friend (user ${fay.id})`)).toBeVisible();
  await expect(maps.getByText(`Gus Guest (user ${gus.id})`)).toBeVisible();
  await expect(page.getByRole("list", { name: "Who may read Letters" })).toHaveCount(0);
  expect(firstId).toBeLessThan(secondId);

  // A reload starts again from "Choose…".
  await page.reload();
  await expect(bundle).toHaveValue("");
  await owner.close();
});

test("every confirmation's Cancel changes nothing; confirming does, and says so", async ({ browser }) => {
  const [owen, fay, rita] = await newUsers("Owen Owner", "Fay Friend", "Rita Requester");
  const owner = await signedIn(browser, owen);
  const bundleId = await createBundle(owner.page, "Notes");
  await owner.page.getByLabel("Your bundle", { exact: true }).selectOption({ label: `Notes (id ${bundleId})` });
  await owner.page.getByLabel("E-mail of the person to let in").fill(fay.email);
  await owner.page.getByRole("button", { name: "Let in", exact: true }).click();
  await expect(status(owner.page, "can now read “Notes”")).toBeVisible();
  const friend = await signedIn(browser, fay);
  const asker = await signedIn(browser, rita);
  await asker.page.getByLabel("Owner's e-mail").fill(owen.email);
  await asker.page.getByLabel("Bundle id or link").fill(String(bundleId));
  await asker.page.getByRole("button", { name: "Send request" }).click();
  await expect(status(asker.page, "Request sent")).toBeVisible();
  await owner.page.reload();
  await friend.page.reload();

  /** Opens the dialog of `button`, cancels it, and checks that the page, reloaded, still offers the same button. */
  async function cancelKeeps(page: Page, button: string, dialogTitle: string) {
    await page.getByRole("button", { name: button }).click();
    const dialog = page.getByRole("dialog", { name: dialogTitle });
    await expect(dialog).toBeVisible();
    await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(dialog).toBeHidden();
    await page.reload();
    await expect(page.getByRole("button", { name: button })).toBeVisible();
  }
  async function confirm(page: Page, button: string, dialogTitle: string, confirmLabel: string, said: string) {
    await page.getByRole("button", { name: button }).click();
    await page.getByRole("dialog", { name: dialogTitle }).getByRole("button", { name: confirmLabel }).click();
    await expect(status(page, said)).toBeVisible();
    await expect(page.getByRole("button", { name: button })).toHaveCount(0);
  }

  await cancelKeeps(friend.page, "Give up access to Notes", "Give up your access to “Notes”?");
  await cancelKeeps(asker.page, "Withdraw your request for Notes", "Withdraw your request?");
  await cancelKeeps(owner.page, "Decline the request for Notes", "Decline this request?");
  await cancelKeeps(owner.page, "Delete bundle Notes", "Delete “Notes”?");
  // Escape closes a dialog as Cancel does.
  await owner.page.getByRole("button", { name: "Delete bundle Notes" }).click();
  await owner.page.keyboard.press("Escape");
  await expect(owner.page.getByRole("dialog")).toBeHidden();

  await confirm(friend.page, "Give up access to Notes", "Give up your access to “Notes”?", "Give up access", "You gave up your access to “Notes”.");
  await confirm(owner.page, "Decline the request for Notes", "Decline this request?", "Decline request", "Declined the request for “Notes”: nobody was given access.");
  // The requester sees what became of it (docs/rules/pages.md#sharing).
  await asker.page.reload();
  const sentByRita = asker.page.getByRole("region", { name: "Requests you sent" });
  await expect(sentByRita.getByText("Declined", { exact: true })).toBeVisible();
  await expect(sentByRita.getByRole("button", { name: "Withdraw your request for Notes" })).toHaveCount(0);

  // A new request, withdrawn by its sender.
  await asker.page.getByLabel("Owner's e-mail").fill(owen.email);
  await asker.page.getByLabel("Bundle id or link").fill(String(bundleId));
  await asker.page.getByRole("button", { name: "Send request" }).click();
  await expect(status(asker.page, "Request sent")).toBeVisible();
  await confirm(asker.page, "Withdraw your request for Notes", "Withdraw your request?", "Withdraw request", "Withdrew your request for “Notes”. Its link no longer works.");
  await asker.page.reload();
  await expect(sentByRita.getByText("Withdrawn", { exact: true })).toBeVisible();
  await expect(sentByRita.getByText("Declined", { exact: true })).toBeVisible();

  await confirm(owner.page, "Delete bundle Notes", "Delete “Notes”?", "Delete bundle", "Deleted “Notes”. Everyone you had let in lost access to it.");
  await expect(owner.page.getByText("You do not own a bundle yet.")).toBeVisible();
  await Promise.all([owner.close(), friend.close(), asker.close()]);
});

test("the redeem page's other states: declined there (and after a reload), a link for someone else, a broken link", async ({ browser }) => {
  const [olive, rita, eve] = await newUsers("Olive Owner", "Rita Requester", "Eve Elsewhere");
  const owner = await signedIn(browser, olive);
  const bundleId = await createBundle(owner.page, "Garden plans");
  const asker = await signedIn(browser, rita);
  await asker.page.getByLabel("Owner's e-mail").fill(olive.email);
  await asker.page.getByLabel("Bundle id or link").fill(String(bundleId));
  await asker.page.getByRole("button", { name: "Send request" }).click();
  await expect(status(asker.page, "Request sent")).toBeVisible();
  const link = linkIn(await readMailbox(owner.page, olive.email, "Rita Requester asks you for access to your bundle"), "/redeem?token=");

  // Someone else who got hold of the link learns nothing about the request.
  const other = await signedIn(browser, eve, "/");
  await other.page.goto(link);
  const refusal = other.page.getByRole("main").getByRole("alert");
  await expect(refusal).toContainText("This link is not for you");
  await expect(refusal).toContainText(`You are signed in as ${eve.email}`);
  await expect(other.page.getByText("Garden plans")).toHaveCount(0);
  await checkPage(other.page, "redeem-not-for-you", { assets: false });
  await other.page.goto("/redeem?token=not-a-token");
  await expect(other.page.getByRole("main").getByRole("alert")).toContainText("This link is not valid");
  await checkPage(other.page, "redeem-invalid", { assets: false });

  // The owner declines on the redeem page: it asks first, then says what happened, also after a reload.
  await owner.page.goto(link);
  await owner.page.getByRole("button", { name: "Decline" }).click();
  await checkPage(owner.page, "redeem-confirm-decline", { assets: false });
  await owner.page.getByRole("dialog", { name: "Decline this request?" }).getByRole("button", { name: "Decline request" }).click();
  await expect(owner.page.getByRole("status").filter({ hasText: "This request was declined" })).toContainText("Nobody was given access.");
  await owner.page.reload();
  await expect(owner.page.getByRole("status").filter({ hasText: "This request was declined" })).toContainText(/You declined the request on .+\. Nobody was given access\./);
  await expect(owner.page.getByRole("main").getByRole("alert")).toHaveCount(0);
  await expect(owner.page.getByRole("button", { name: "Accept" })).toHaveCount(0);
  await checkPage(owner.page, "redeem-declined", { assets: false });
  // The requester sees the request as declined, on the page as in the API
  // (docs/rules/permission-requests.md#listing-and-reading), and got a mail saying so
  // (docs/rules/permission-requests.md#declining-mails-the-requester).
  await asker.page.reload();
  const sent = asker.page.getByRole("region", { name: "Requests you sent" });
  await expect(sent.getByText("You asked Olive Owner")).toBeVisible();
  await expect(sent.getByText("Declined", { exact: true })).toBeVisible();
  await expect(sent.getByText(/on .+: nobody was given access/)).toBeVisible();
  await checkPage(asker.page, "sharing-sent-declined", { assets: false });
  const api = await asker.page.request.get("/api/bundle_permission_request/", { headers: { Accept: "application/json" } });
  expect((await api.json()).objects[0]).toMatchObject({ status: "declined", bundle: { name: "Garden plans" } });
  const declinedMail = await readMailbox(asker.page, rita.email, "Your request for “Garden plans” was declined");
  expect(declinedMail).toContain(`Olive Owner (user ${olive.id}) declined your request to let you read the bundle “Garden plans”`);
  expect(declinedMail).not.toContain(olive.email);
  await checkPage(asker.page, "mailbox-declined", { assets: false });
  await Promise.all([owner.close(), asker.close(), other.close()]);
});

test("the owner accepts a request on the sharing page, without the mailed link", async ({ browser }) => {
  const [olive, rita] = await newUsers("Olive Owner", "Rita Requester");
  const owner = await signedIn(browser, olive);
  const bundleId = await createBundle(owner.page, "Sketches");
  const asker = await signedIn(browser, rita);
  await asker.page.getByLabel("Owner's e-mail").fill(olive.email);
  await asker.page.getByLabel("Bundle id or link").fill(String(bundleId));
  await asker.page.getByRole("button", { name: "Send request" }).click();
  await expect(status(asker.page, "Request sent")).toBeVisible();

  await owner.page.reload();
  const toYou = owner.page.getByRole("region", { name: "Requests to you" });
  await expect(toYou.getByText(`Rita Requester (${rita.email}) asks you for access to “Sketches”.`)).toBeVisible();
  await checkPage(owner.page, "sharing-accept-offered", { assets: false });
  await toYou.getByRole("button", { name: "Accept the request for Sketches" }).click();
  await expect(status(owner.page, `Accepted: Rita Requester (${rita.email}) can now read “Sketches”.`)).toBeVisible();
  await expect(owner.page.getByRole("list", { name: "Who may read Sketches" }).getByText(`Rita Requester (user ${rita.id})`)).toBeVisible();
  await expect(toYou.getByText("No requests are waiting for you.")).toBeVisible();

  // The requester sees it accepted and can read the bundle; the mailed link says it was accepted.
  await asker.page.reload();
  await expect(asker.page.getByRole("region", { name: "Requests you sent" }).getByText("Accepted", { exact: true })).toBeVisible();
  await expect(asker.page.getByRole("region", { name: "Shared with you" }).getByText("Sketches")).toBeVisible();
  const link = linkIn(await readMailbox(owner.page, olive.email, "Rita Requester asks you for access to your bundle “Sketches”"), "/redeem?token=");
  await owner.page.goto(link);
  await expect(owner.page.getByText("Accepted")).toBeVisible();
  await expect(owner.page.getByRole("button", { name: "Accept" })).toHaveCount(0);
  await Promise.all([owner.close(), asker.close()]);
});
