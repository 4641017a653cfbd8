// A permission request from end to end: a requester creates it through the API; the target opens the link
// mailed to them (read from the outbox through the admin CLI), signs in, sees who asks for whom and which
// bundle, and accepts; the allowed user can then read the bundle. Someone else opening the link is told it
// is not for them, and a used link shows the accepted request.
import { expect, test, type APIRequestContext, type Browser } from "@playwright/test";
import { cli, newUser, signIn } from "./helpers";

type User = ReturnType<typeof newUser>;

async function bearerFor(request: APIRequestContext, user: User): Promise<string> {
  const registered = cli<{ client_id: string; client_secret: string }>("client:create", "--owner", user.email, "--name", `Script of ${user.name}`, "--grant", "password");
  const res = await request.post("/api/connect/oauth2/token/", {
    data: { grant_type: "password", client_id: registered.client_id, client_secret: registered.client_secret, username: user.email, password: user.password, scope: "readonly readwrite" },
  });
  expect(res.status()).toBe(200);
  return (await res.json()).access_token;
}

function mailedLink(to: string): string {
  const mails = cli<{ text: string; subject: string }[]>("mail:list", "--to", to);
  expect(mails.length, `mail to ${to}`).toBeGreaterThan(0);
  const link = /https?:\/\/\S+\/redeem\?\S*token=[\w-]+/.exec(mails[0]!.text)?.[0];
  expect(link, mails[0]!.text).toMatch(/^http:\/\/localhost:\d+\/redeem\?(\S*&)?token=[\w-]{43}$/);
  return link!;
}

async function openAs(browser: Browser, user: User, link: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(link);
  // Signed out: the link leads through sign-in and back to itself.
  await expect(page).toHaveURL(/\/login\?callbackUrl=/);
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/redeem\?/);
  return { page, close: () => context.close() };
}

test("the target accepts a request from the mailed link, and the allowed user can then read the bundle", async ({ browser, request }) => {
  const target = newUser("Tina Target");
  const requester = newUser("Rita Requester");
  const allowed = newUser("Alan Allowed");
  const bundle = cli<{ id: number; resource_uri: string }>("bundle:create", "--owner", target.email, "--name", "Holiday photos");

  const requesterToken = await bearerFor(request, requester);
  const created = await request.post("/api/bundle_permission_request/", {
    headers: { authorization: `Bearer ${requesterToken}` },
    data: { bundle: bundle.resource_uri, user_allowed: allowed.email, user_target: `/api/user/${target.id}/` },
  });
  expect(created.status()).toBe(201);
  const record = await created.json();
  expect(record.status).toBe("pending");

  const allowedToken = await bearerFor(request, allowed);
  expect((await request.get(bundle.resource_uri, { headers: { authorization: `Bearer ${allowedToken}` } })).status()).toBe(404);

  const link = mailedLink(target.email);
  const { page, close } = await openAs(browser, target, link);
  await expect(page.getByText("Rita Requester")).toBeVisible();
  await expect(page.getByText("Alan Allowed")).toBeVisible();
  await expect(page.getByText("“Holiday photos”")).toBeVisible();
  await page.getByRole("button", { name: "Accept" }).click();
  await expect(page.getByText("Accepted")).toBeVisible();

  const read = await request.get(bundle.resource_uri, { headers: { authorization: `Bearer ${allowedToken}` } });
  expect(read.status()).toBe(200);
  expect((await read.json()).name).toBe("Holiday photos");

  // The same link again: the request shows as accepted, and cannot be used again.
  await page.goto(link);
  await expect(page.getByText("Accepted")).toBeVisible();
  await expect(page.getByRole("button", { name: "Accept" })).toHaveCount(0);
  await close();
});

test("someone other than the target opening the link is told it is not for them, and cannot use it", async ({ browser, request }) => {
  const target = newUser("Owner");
  const requester = newUser("Asker");
  const allowed = newUser("Friend");
  const stranger = newUser("Stranger");
  const bundle = cli<{ resource_uri: string }>("bundle:create", "--owner", target.email, "--name", "Private notes");
  const res = await request.post("/api/bundle_permission_request/", {
    headers: { authorization: `Bearer ${await bearerFor(request, requester)}` },
    data: { bundle: bundle.resource_uri, user_allowed: allowed.email, user_target: target.email },
  });
  expect(res.status()).toBe(201);

  const { page, close } = await openAs(browser, stranger, mailedLink(target.email));
  await expect(page.getByText("This link is not for you")).toBeVisible();
  await expect(page.getByText(stranger.email).first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Accept" })).toHaveCount(0);
  await close();
});

test("the target can decline from the link; the request then answers that it was declined", async ({ browser, request }) => {
  const target = newUser("Dana");
  const requester = newUser("Eve");
  const bundle = cli<{ resource_uri: string }>("bundle:create", "--owner", target.email, "--name", "Recipes");
  const res = await request.post("/api/bundle_permission_request/", {
    headers: { authorization: `Bearer ${await bearerFor(request, requester)}` },
    data: { bundle: bundle.resource_uri, user_allowed: requester.email, user_target: target.email },
  });
  expect(res.status()).toBe(201);
  const link = mailedLink(target.email);
  const { page, close } = await openAs(browser, target, link);
  await page.getByRole("button", { name: "Decline" }).click();
  await page.getByRole("dialog", { name: "Decline this request?" }).getByRole("button", { name: "Decline request" }).click();
  await expect(page.getByText("You declined the request")).toBeVisible();
  await page.goto(link);
  await expect(page.getByText("This request was declined")).toBeVisible();
  await close();
});

test("the sharing page lists who may read a bundle and revokes access at once", async ({ page, request }) => {
  const owner = newUser("Olga Owner");
  const friend = newUser("Fred Friend");
  const bundle = cli<{ resource_uri: string }>("bundle:create", "--owner", owner.email, "--name", "Shared drawings");
  const ownerToken = await bearerFor(request, owner);
  const granted = await request.post("/api/bundle_permission/", { headers: { authorization: `Bearer ${ownerToken}` }, data: { bundle: bundle.resource_uri, user_allowed: friend.email } });
  expect(granted.status()).toBe(201);
  const friendToken = await bearerFor(request, friend);
  expect((await request.get(bundle.resource_uri, { headers: { authorization: `Bearer ${friendToken}` } })).status()).toBe(200);

  await signIn(page, owner.email, owner.password, "/login?callbackUrl=%2Fsettings%2Fsharing");
  await expect(page.getByRole("heading", { name: "Shared drawings" })).toBeVisible();
  await page.getByRole("button", { name: "Revoke Fred Friend's access to Shared drawings" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Revoke access" }).click();
  await expect(page.getByText("Only you can read it.")).toBeVisible();
  expect((await request.get(bundle.resource_uri, { headers: { authorization: `Bearer ${friendToken}` } })).status()).toBe(404);
});
