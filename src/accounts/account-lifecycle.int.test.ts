// The account lifecycle against a real database, through the production dispatcher (docs/rules/accounts.md):
// - account pre-hijacking: whoever signs up first with someone else's address gets an unconfirmed account
//   that can register no client, approve no app and get no token by any grant; and when the address's owner
//   confirms it (by a password reset, or by the mailed link), everything the account did before is undone:
//   its clients deleted, its grants and tokens revoked, its consents forgotten;
// - every password reset revokes every grant and token of the account (also those a warm validated-token
//   cache holds), forgets its consents (apps must ask again) and signs out every browser session;
// - an unconfirmed account may still sign in and ask for the confirmation mail again.
import { afterEach, describe, expect, it } from "vitest";
import { now, resetClock } from "@/clock";
import { requestPasswordReset } from "@/accounts/request-password-reset";
import { takeAccountStep } from "@/accounts/lifecycle";
import { describePasswordReset, resetPassword } from "@/accounts/reset-password";
import { signUp } from "@/accounts/sign-up";
import { confirmEmail, describeVerification, resendVerification } from "@/accounts/verify-email";
import { sessionUserFromCookieHeader } from "@/auth/session";
import { createClient } from "@/clients/create-client";
import { listMail } from "@/email/list-mail";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { digest } from "@/secrets";
import { db, driver, write } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { clientRow, consentRow, grantRow, makeClient, makeUser, passwordSession, uniqueEmail } from "@/testing/factories";
import { Barrier, together } from "@/testing/race";
import { sessionCookie } from "@/testing/session";
import { deviceFormCsrfToken } from "@/device/verify-user-code";
import { hashPassword } from "@/users/passwords";
import { signInWithPassword } from "@/users/sign-in";

afterEach(() => resetClock());

const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test/callback";
const ATTACKER_PASSWORD = "the attacker's password";
const OWNER_PASSWORD = "the owner's own password";

/** A fresh client address per call, so that no per-address limit bites. */
const ipFor = (() => {
  const base = Math.floor(Math.random() * 200);
  let next = 0;
  return () => `10.${base}.${Math.floor(++next / 250) + 50}.${next % 250}`;
})();

const userRow = async (email: string) => (await db()).user.findUniqueOrThrow({ where: { email } });
const read = (userId: number, token: string) => call("GET", `/api/user/${userId}/`, { token });
type Credentials = { client_id: string; client_secret: string | null };
const secretOf = (client: Credentials) => (client.client_secret ? { client_secret: client.client_secret } : {});
const refresh = (client: Credentials, refreshToken: string, extra: Record<string, string> = {}) =>
  call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: client.client_id, ...secretOf(client), ...extra } });

/** Signs up as a stranger would (no confirmation): the account of `email`, unconfirmed. */
async function signUpUnconfirmed(email: string, password = ATTACKER_PASSWORD) {
  await signUp({ email, name: "Mallory", password, ip: ipFor() });
  const user = await userRow(email);
  expect(user.emailVerifiedAt).toBeNull();
  return { ...user, password };
}

/** The owner of `email` asks for a reset link and chooses a new password with it. */
async function resetByMail(email: string, password = OWNER_PASSWORD) {
  await requestPasswordReset({ email, ip: ipFor() });
  const [mail] = await listMail({ to: email });
  const token = /\/reset-password\?token=([A-Za-z0-9_-]{43})/.exec(mail?.text ?? "")?.[1];
  expect(token, mail?.text).toBeDefined();
  expect(await resetPassword({ token: token!, password })).toEqual({ state: "reset", email });
}

/** The bearer read has answered `token` and (PostgreSQL) the validated-token cache would answer it again. */
async function warmCache(userId: number, token: string) {
  expect((await read(userId, token)).status).toBe(200);
  const d = await driver();
  if (d.kind !== "postgresql" || !d.tokenCache) return;
  const cache = d.tokenCache;
  const started = Date.now();
  while (!cache.get(digest(token), now().getTime())) {
    if (Date.now() - started > 10_000) throw new Error("the token cache did not warm within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await read(userId, token)).status).toBe(200);
  }
}

/** Posts the consent form's decision as the signed-in person's browser would. */
function decide(userId: number, cookie: string, location: string, decision: "approve" | "deny" = "approve") {
  const sealed = new URL(location, BASE).searchParams.get("request")!;
  return call("POST", "/consent/decide", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie },
    raw: new URLSearchParams({ request: sealed, csrf: consentCsrfToken(userId, sealed), decision }).toString(),
  });
}

const authorizeUrl = (clientId: string, responseType: "code" | "token", state = "s") =>
  `/api/connect/oauth2/auth/?${new URLSearchParams({ response_type: responseType, client_id: clientId, redirect_uri: REDIRECT, scope: "readonly", state })}`;

describe("pre-hijacking an address: sign-up before its owner", () => {
  it("the squatter's account is refused a client and every token; when the owner takes the address by a password reset its tokens die, its client goes, its consents are forgotten", async () => {
    const email = uniqueEmail("victim");
    const attacker = await signUpUnconfirmed(email);

    // Refused while the address is not confirmed.
    await expect.soft(createClient({ ownerId: attacker.id, name: "Squatter's script", grantType: "password" })).rejects.toMatchObject({ status: 403 });
    // What an account could make when nothing stopped it: its own password client with tokens, and an
    // approved third-party app (remembered consent and tokens).
    const own = await clientRow({ ownerId: attacker.id, grantType: "password" });
    const grant = await call("POST", TOKEN, { body: { grant_type: "password", username: email, password: ATTACKER_PASSWORD, client_id: own.client_id, client_secret: own.client_secret } });
    expect.soft(grant.status, grant.text).toBe(400);
    expect.soft(grant.json?.error).toBe("invalid_grant");
    const ownTokens = await grantRow({ userId: attacker.id, clientId: own.id, scopes: ["readonly", "readwrite"] });
    const appOwner = await makeUser({ name: "App Maker" });
    const app = await makeClient({ ownerId: appOwner.id, grantType: "authorization_code", redirectUris: [REDIRECT] });
    const appId = (await (await db()).client.findUniqueOrThrow({ where: { clientId: app.client_id } })).id;
    await consentRow({ userId: attacker.id, clientId: appId });
    const appTokens = await grantRow({ userId: attacker.id, clientId: appId, grantType: "authorization_code" });
    // The squatter's tokens read the account, also from a warm validated-token cache.
    await warmCache(attacker.id, ownTokens.accessToken);
    await warmCache(attacker.id, appTokens.accessToken);

    // The address's owner takes it over by a password reset, which confirms it.
    await resetByMail(email);
    expect((await userRow(email)).emailVerifiedAt).toBeInstanceOf(Date);

    for (const token of [ownTokens.accessToken, appTokens.accessToken]) expect.soft((await read(attacker.id, token)).status).toBe(401);
    // The third party's app still exists: its refresh token is invalid_grant. The squatter's own client is gone.
    const rotated = await refresh(app, appTokens.refreshToken);
    expect.soft(rotated.status, rotated.text).toBe(400);
    expect.soft(rotated.json?.error).toBe("invalid_grant");
    const gone = await refresh(own, ownTokens.refreshToken);
    expect.soft(gone.status, gone.text).toBe(401);
    expect.soft(gone.json?.error).toBe("invalid_client");
    const left = await db();
    expect.soft(await left.client.count({ where: { ownerId: attacker.id } })).toBe(0);
    expect.soft(await left.consent.count({ where: { userId: attacker.id } })).toBe(0);
    expect.soft(await left.grant.count({ where: { userId: attacker.id, revokedAt: null } })).toBe(0);
    // The third party's app itself stays: it was not the squatter's.
    expect(await left.client.count({ where: { id: appId } })).toBe(1);
    // Recorded with the change.
    const types = (await left.auditEvent.findMany({ where: { userId: attacker.id }, orderBy: { id: "asc" } })).map((event) => event.type);
    expect.soft(types).toEqual(expect.arrayContaining(["account.confirmed", "password.reset", "client.deleted", "consent.revoked", "token.revoked"]));
    // The owner signs in with their own password; the squatter's no longer works.
    expect(await signInWithPassword({ email, password: OWNER_PASSWORD, ip: ipFor() })).toMatchObject({ ok: true });
    expect(await signInWithPassword({ email, password: ATTACKER_PASSWORD, ip: ipFor() })).toEqual({ ok: false, reason: "invalid" });
  });

  it("the first confirmation by the mailed link undoes the same; later resets keep the account's clients", async () => {
    const email = uniqueEmail("linked");
    const squatter = await signUpUnconfirmed(email);
    const own = await clientRow({ ownerId: squatter.id, grantType: "password" });
    const tokens = await grantRow({ userId: squatter.id, clientId: own.id });
    await warmCache(squatter.id, tokens.accessToken);

    const [mail] = await listMail({ to: email });
    const link = /\/verify-email\?token=([A-Za-z0-9_-]{43})/.exec(mail?.text ?? "")![1]!;
    expect(await confirmEmail(link)).toEqual({ state: "confirmed", email });
    expect.soft((await read(squatter.id, tokens.accessToken)).status).toBe(401);
    expect.soft((await refresh(own, tokens.refreshToken)).json?.error).toBe("invalid_client"); // its client is gone
    expect.soft(await (await db()).client.count({ where: { ownerId: squatter.id } })).toBe(0);

    // Confirmed now: the account registers a client that a later reset leaves in place (it revokes tokens only).
    const kept = await createClient({ ownerId: squatter.id, name: "After confirmation", grantType: "password" });
    await resetByMail(email);
    expect(await (await db()).client.count({ where: { clientId: kept.client_id } })).toBe(1);
  });
});

describe("every password reset of a confirmed account", () => {
  it("revokes every grant and token of the account (a warm token cache too), forgets its consents and signs out every browser session", async () => {
    const s = await passwordSession();
    const user = s.user;
    // An app the user approved on the consent page: remembered consent and a code exchanged for tokens.
    const appOwner = await makeUser({ name: "App Maker" });
    const app = await makeClient({ ownerId: appOwner.id, grantType: "authorization_code", redirectUris: [REDIRECT] });
    const cookie = await sessionCookie(user);
    const asked = await call("GET", authorizeUrl(app.client_id, "code"), { headers: { cookie } });
    const approved = await decide(user.id, cookie, asked.headers.get("location")!);
    const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
    const exchanged = await call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: app.client_id, client_secret: app.client_secret } });
    expect(exchanged.status, exchanged.text).toBe(200);
    const appTokens = exchanged.json as { access_token: string; refresh_token: string };
    // A client credentials token of the user's own service.
    const service = await makeClient({ ownerId: user.id, grantType: "client_credentials", redirectUris: [] });
    const serviceToken = (await call("POST", TOKEN, { body: { grant_type: "client_credentials", client_id: service.client_id, client_secret: service.client_secret } })).json.access_token as string;

    for (const token of [s.accessToken, appTokens.access_token, serviceToken]) await warmCache(user.id, token);
    const laptop = await sessionCookie(user, 0);
    expect(await sessionUserFromCookieHeader(laptop)).toMatchObject({ id: user.id });

    await resetByMail(user.email);

    for (const token of [s.accessToken, appTokens.access_token, serviceToken]) expect.soft((await read(user.id, token)).status).toBe(401);
    for (const [client, token] of [[s.client, s.refreshToken], [app, appTokens.refresh_token]] as const) {
      const rotated = await refresh(client, token);
      expect.soft(rotated.status, rotated.text).toBe(400);
      expect.soft(rotated.json?.error).toBe("invalid_grant");
    }
    expect(await sessionUserFromCookieHeader(laptop)).toBeNull();
    const left = await db();
    expect.soft(await left.grant.count({ where: { userId: user.id, revokedAt: null } })).toBe(0);
    expect.soft(await left.consent.count({ where: { userId: user.id } })).toBe(0);
    // Its own clients stay (a confirmed account's clients are its owner's), and get new tokens with the new password.
    expect(await left.client.count({ where: { ownerId: user.id } })).toBe(2);
    const again = await call("POST", TOKEN, { body: { grant_type: "password", username: user.email, password: OWNER_PASSWORD, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect(again.status, again.text).toBe(200);
    // The app must ask again: the consent page, not a code at once.
    const fresh = await sessionCookie(user, 1);
    const reasked = await call("GET", authorizeUrl(app.client_id, "code", "again"), { headers: { cookie: fresh } });
    expect.soft(reasked.headers.get("location")).toMatch(/^\/consent\?request=/);
  });

  it("leaves no live token when refreshes of the account's grants run at the same moment as the reset", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    const passwordGrant = () =>
      call("POST", TOKEN, { body: { grant_type: "password", username: user.email, password: user.password, client_id: client.client_id, client_secret: client.client_secret } });
    const pairs = await Promise.all(Array.from({ length: 6 }, async () => (await passwordGrant()).json as { access_token: string; refresh_token: string }));
    await requestPasswordReset({ email: user.email, ip: ipFor() });
    const link = /\/reset-password\?token=([A-Za-z0-9_-]{43})/.exec((await listMail({ to: user.email }))[0]!.text)![1]!;
    const passwordHash = await hashPassword(OWNER_PASSWORD);

    // Every refresh held at its body, and the reset's transaction, let go at once.
    const barrier = new Barrier(pairs.length + 1);
    const refreshes = pairs.map((pair) =>
      call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: pair.refresh_token, client_id: client.client_id, client_secret: client.client_secret }, heldBy: barrier }),
    );
    const reset = barrier.arrive().then(() => takeAccountStep(link, { purpose: "reset_password", passwordHash }));
    const [outcome, ...answers] = await together<unknown>(barrier, [reset, ...refreshes]);
    expect(barrier.arrived).toBe(pairs.length + 1);
    expect(outcome).toMatchObject({ state: "done", userId: user.id });

    // Each refresh either lost to the reset (invalid_grant) or won, and then its new tokens were revoked with the rest.
    for (const answer of answers as Awaited<ReturnType<typeof call>>[]) {
      if (answer.status === 200) expect((await read(user.id, String(answer.json.access_token))).status).toBe(401);
      else expect(answer.json).toEqual({ error: "invalid_grant" });
    }
    const left = await db();
    expect(await left.accessToken.count({ where: { userId: user.id, revokedAt: null } })).toBe(0);
    expect(await left.refreshToken.count({ where: { userId: user.id, revokedAt: null } })).toBe(0);
    expect(await left.grant.count({ where: { userId: user.id, revokedAt: null } })).toBe(0);
  });

  it("withdraws a device approval that no device has collected yet", async () => {
    const user = await makeUser();
    const owner = await makeUser({ name: "Device Maker" });
    const device = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
    const started = (await call("POST", "/api/connect/oauth2/device/", { body: { client_id: device.client_id, scope: "readonly" } })).json as { device_code: string; user_code: string };
    const cookie = await sessionCookie(user);
    const typed = await call("POST", "/device/verify", {
      headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie },
      raw: new URLSearchParams({ user_code: started.user_code, csrf: deviceFormCsrfToken(user.id) }).toString(),
    });
    expect((await decide(user.id, cookie, typed.headers.get("location")!)).headers.get("location")).toBe("/device?done=approved");

    await resetByMail(user.email);
    const polled = await call("POST", TOKEN, { body: { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: started.device_code, client_id: device.client_id } });
    expect(polled.json).toEqual({ error: "access_denied" });
  });
});

describe("an account whose address is not confirmed", () => {
  it("cannot register a client: 403 with a sentence, and nothing is written", async () => {
    const user = await signUpUnconfirmed(uniqueEmail("early"));
    const refused = await createClient({ ownerId: user.id, name: "Too early", grantType: "authorization_code", redirectUris: [REDIRECT] }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 403, error: expect.stringMatching(/^Confirm your e-mail address/) });
    expect(await (await db()).client.count({ where: { ownerId: user.id } })).toBe(0);
  });

  it("cannot approve an app on the consent page (access_denied, nothing remembered, no code), nor a device", async () => {
    const user = await signUpUnconfirmed(uniqueEmail("approver"));
    const owner = await makeUser({ name: "App Maker" });
    const app = await makeClient({ ownerId: owner.id, grantType: "authorization_code", redirectUris: [REDIRECT] });
    const cookie = await sessionCookie(user);
    const asked = await call("GET", authorizeUrl(app.client_id, "code"), { headers: { cookie } });
    expect(asked.headers.get("location")).toMatch(/^\/consent\?request=/);
    const decided = await decide(user.id, cookie, asked.headers.get("location")!);
    expect(decided.status).toBe(303);
    const back = new URL(decided.headers.get("location")!);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("code")).toBeNull();
    expect(await (await db()).consent.count({ where: { userId: user.id } })).toBe(0);
    expect(await (await db()).grant.count({ where: { userId: user.id } })).toBe(0);

    // The device flow's approval.
    const device = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
    const started = (await call("POST", "/api/connect/oauth2/device/", { body: { client_id: device.client_id, scope: "readonly" } })).json as { device_code: string; user_code: string };
    const typed = await call("POST", "/device/verify", {
      headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie },
      raw: new URLSearchParams({ user_code: started.user_code, csrf: deviceFormCsrfToken(user.id) }).toString(),
    });
    expect(typed.headers.get("location")).toMatch(/^\/consent\?request=/);
    const refused = await decide(user.id, cookie, typed.headers.get("location")!);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("Confirm your e-mail address");
    expect(refused.text).toContain("access_denied");
    const row = await (await db()).deviceAuthorization.findFirstOrThrow({ where: { clientId: (await (await db()).client.findUniqueOrThrow({ where: { clientId: device.client_id } })).id } });
    expect(row).toMatchObject({ status: "pending", userId: null });
    const polled = await call("POST", TOKEN, { body: { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: started.device_code, client_id: device.client_id } });
    expect(polled.json?.error).toBe("authorization_pending");
  });

  it("gets no token by any grant: code exchange, implicit, password, device code, client credentials, refresh", async () => {
    const user = await signUpUnconfirmed(uniqueEmail("tokens"));
    const cookie = await sessionCookie(user);
    const owner = await makeUser({ name: "First Party" });
    const refusedWith = async (response: Awaited<ReturnType<typeof call>>, error: string) => {
      expect(response.status, response.text).toBe(400);
      expect(response.json).toEqual({ error });
    };

    // Authorization code: a first-party app asks no consent, so the code comes; its exchange is refused.
    const firstParty = await makeClient({ ownerId: owner.id, grantType: "authorization_code", redirectUris: [REDIRECT], firstParty: true });
    const coded = await call("GET", authorizeUrl(firstParty.client_id, "code"), { headers: { cookie } });
    const code = new URL(coded.headers.get("location")!).searchParams.get("code");
    expect(code).toBeTruthy();
    await refusedWith(await call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: firstParty.client_id, client_secret: firstParty.client_secret } }), "invalid_grant");

    // Implicit: the first-party app's token is refused with access_denied in the fragment.
    const implicit = await makeClient({ ownerId: owner.id, grantType: "implicit", redirectUris: [REDIRECT], firstParty: true });
    const implied = await call("GET", authorizeUrl(implicit.client_id, "token"), { headers: { cookie } });
    const fragment = new URLSearchParams(new URL(implied.headers.get("location")!).hash.slice(1));
    expect(fragment.get("error")).toBe("access_denied");
    expect(fragment.get("access_token")).toBeNull();

    // Password: the account's own password client (as one made before the rule).
    const own = await clientRow({ ownerId: user.id, grantType: "password" });
    await refusedWith(await call("POST", TOKEN, { body: { grant_type: "password", username: user.email, password: user.password, client_id: own.client_id, client_secret: own.client_secret } }), "invalid_grant");

    // Client credentials: the account's own service client.
    const service = await clientRow({ ownerId: user.id, grantType: "client_credentials" });
    await refusedWith(await call("POST", TOKEN, { body: { grant_type: "client_credentials", client_id: service.client_id, client_secret: service.client_secret } }), "unauthorized_client");

    // Device code: an approval written directly (the consent page refuses it now).
    const device = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
    const started = (await call("POST", "/api/connect/oauth2/device/", { body: { client_id: device.client_id, scope: "readonly" } })).json as { device_code: string };
    await write((tx) => tx.deviceAuthorization.update({ where: { deviceCodeDigest: digest(started.device_code) }, data: { status: "approved", userId: user.id, decidedAt: now() } }));
    await refusedWith(await call("POST", TOKEN, { body: { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: started.device_code, client_id: device.client_id } }), "invalid_grant");

    // Refresh of a grant made before the rule: refused, with and without narrowing, and not used up.
    const before = await grantRow({ userId: user.id, clientId: own.id, scopes: ["readonly", "readwrite"] });
    await refusedWith(await refresh(own, before.refreshToken), "invalid_grant");
    await refusedWith(await refresh(own, before.refreshToken, { scope: "readonly" }), "invalid_grant");
    const stored = await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(before.refreshToken) } });
    expect(stored).toMatchObject({ usedAt: null, revokedAt: null });
    expect(await (await db()).accessToken.count({ where: { userId: user.id } })).toBe(1);
  });

  it("may sign in, is told to confirm, and may ask for the mail again", async () => {
    const email = uniqueEmail("waiting");
    const user = await signUpUnconfirmed(email);
    expect(await signInWithPassword({ email, password: user.password, ip: ipFor() })).toMatchObject({ ok: true });
    expect(await resendVerification(user.id)).toEqual({ state: "sent" });
    expect((await listMail({ to: email })).map((mail) => mail.subject)).toEqual(["Confirm your e-mail address", "Confirm your e-mail address"]);
  });
});

describe("a link is tied to the address it was mailed to", () => {
  it("confirms, resets and undoes nothing once the account has another address, and stays unused", async () => {
    const email = uniqueEmail("moved");
    const user = await signUpUnconfirmed(email);
    const [mail] = await listMail({ to: email });
    const confirmLink = /\/verify-email\?token=([A-Za-z0-9_-]{43})/.exec(mail!.text)![1]!;
    await requestPasswordReset({ email, ip: ipFor() });
    const resetLink = /\/reset-password\?token=([A-Za-z0-9_-]{43})/.exec((await listMail({ to: email }))[0]!.text)![1]!;
    const own = await clientRow({ ownerId: user.id });
    const tokens = await grantRow({ userId: user.id, clientId: own.id });
    // Nothing in the service changes an address yet; as if something had.
    const moved = uniqueEmail("elsewhere");
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { email: moved } }));

    // The pages the links open say nothing about the account either (no address, no name).
    expect(await describeVerification(confirmLink)).toEqual({ state: "unknown" });
    expect(await describePasswordReset(resetLink)).toEqual({ state: "unknown" });
    expect(await confirmEmail(confirmLink)).toEqual({ state: "unknown" });
    expect(await resetPassword({ token: resetLink, password: OWNER_PASSWORD })).toEqual({ state: "unknown" });
    expect(await userRow(moved)).toMatchObject({ emailVerifiedAt: null, sessionVersion: 0 });
    expect(await signInWithPassword({ email: moved, password: ATTACKER_PASSWORD, ip: ipFor() })).toMatchObject({ ok: true });
    expect(await (await db()).accountToken.count({ where: { userId: user.id, usedAt: { not: null } } })).toBe(0);
    expect(await (await db()).client.count({ where: { ownerId: user.id } })).toBe(1);
    expect((await read(user.id, tokens.accessToken)).status).toBe(200);
  });

  it("a used confirmation link no longer says its address is confirmed once the account has another address", async () => {
    const email = uniqueEmail("confirmed-then-moved");
    await signUpUnconfirmed(email);
    const link = /\/verify-email\?token=([A-Za-z0-9_-]{43})/.exec((await listMail({ to: email }))[0]!.text)![1]!;
    expect(await confirmEmail(link)).toEqual({ state: "confirmed", email });
    expect(await describeVerification(link)).toEqual({ state: "confirmed", email });
    const user = await userRow(email);
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { email: uniqueEmail("moved-on") } }));
    expect(await describeVerification(link)).toEqual({ state: "used" });
    expect(await confirmEmail(link)).toEqual({ state: "used" });
  });
});
