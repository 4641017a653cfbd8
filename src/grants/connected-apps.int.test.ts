// /settings/apps (docs/rules/pages.md#connected-apps): every app the user approved, also before it used a
// token, with its scopes and when it was approved; disconnecting forgets the consent and revokes every token,
// with consent.revoked and token.revoked in the audit log.
import { describe, expect, it } from "vitest";
import { disconnectApp, listConnectedApps } from "@/grants/connected-apps";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { db } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const REDIRECT = "https://client.example.test/callback";
const TOKEN = "/api/connect/oauth2/token/";

/** A code client the user approves on the consent page (the form the page renders, posted as the browser would). */
async function approvedCodeClient(scope = "readonly readwrite") {
  const owner = await makeUser({ name: "Maker" });
  const user = await makeUser();
  const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", name: "Photo Printer" });
  const cookie = await sessionCookie(user);
  const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope, state: "s" });
  const asked = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie } });
  const sealed = new URL(asked.headers.get("location")!, BASE).searchParams.get("request")!;
  const form = new URLSearchParams({ request: sealed, csrf: consentCsrfToken(user.id, sealed), decision: "approve" });
  const decided = await call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie }, raw: form.toString() });
  expect(decided.status).toBe(303);
  const code = new URL(decided.headers.get("location")!).searchParams.get("code")!;
  return { owner, user, client, cookie, code };
}

const events = async (userId: number) =>
  (await (await db()).auditEvent.findMany({ where: { userId, type: { in: ["consent.revoked", "token.revoked"] } }, orderBy: { id: "asc" } })).map((event) => ({
    type: event.type,
    clientId: event.clientId,
    detail: JSON.parse(event.detail ?? "null") as unknown,
  }));

describe("the apps a user approved", () => {
  it("lists an app approved on the consent page before it has used a token, with its scopes and when it was approved", async () => {
    const { user, client } = await approvedCodeClient();
    const consent = await (await db()).consent.findFirstOrThrow({ where: { userId: user.id } });
    expect(await listConnectedApps(user.id)).toEqual([
      { clientId: client.client_id, name: "Photo Printer", ownerName: "Maker", scopes: ["readonly", "readwrite"], approvedAt: consent.createdAt, since: consent.createdAt, lastUsedAt: null },
    ]);
  });

  it("shows when it last got a token once it used one, and the scopes of consent and tokens together", async () => {
    const { user, client, code } = await approvedCodeClient("readonly");
    const exchanged = await call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret } });
    expect(exchanged.status).toBe(200);
    const grant = await (await db()).grant.findFirstOrThrow({ where: { userId: user.id } });
    const [app] = await listConnectedApps(user.id);
    expect(app).toMatchObject({ clientId: client.client_id, scopes: ["readonly"], lastUsedAt: grant.lastUsedAt, approvedAt: expect.any(Date) });
  });

  it("lists an app that holds a live token without ever being asked (a password client), as connected rather than approved", async () => {
    const session = await passwordSession("readonly");
    const [app] = await listConnectedApps(session.user.id);
    expect(app).toMatchObject({ clientId: session.client.client_id, approvedAt: null, scopes: ["readonly"], lastUsedAt: expect.any(Date) });
  });

  it("shows nothing of other users' apps", async () => {
    await approvedCodeClient();
    const stranger = await makeUser();
    expect(await listConnectedApps(stranger.id)).toEqual([]);
  });
});

describe("disconnecting an app", () => {
  it("forgets the consent (the app must ask again) and revokes every token, recording consent.revoked and token.revoked", async () => {
    const { user, client, code, cookie } = await approvedCodeClient();
    const tokens = await call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret } });
    const { access_token, refresh_token } = tokens.json as { access_token: string; refresh_token: string };
    expect((await call("GET", `/api/user/${user.id}/`, { token: access_token })).status).toBe(200);

    expect(await disconnectApp({ userId: user.id, clientId: client.client_id })).toEqual({ found: true, consentForgotten: true, grantsRevoked: 1, tokensRevoked: 2 });
    expect(await listConnectedApps(user.id)).toEqual([]);
    expect((await call("GET", `/api/user/${user.id}/`, { token: access_token })).status).toBe(401);
    const refreshed = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token, client_id: client.client_id, client_secret: client.client_secret } });
    expect(refreshed.status).toBe(400);
    // The next authorization asks again.
    const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "again" });
    const again = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie } });
    expect(again.headers.get("location")).toMatch(/^\/consent\?request=/);

    expect(await events(user.id)).toEqual([
      { type: "consent.revoked", clientId: client.client_id, detail: { consent: true, grants: 1 } },
      { type: "token.revoked", clientId: client.client_id, detail: { reason: "app disconnected", tokens: 2 } },
    ]);
  });

  it("records only consent.revoked for an app approved but never used, and nothing for an app not connected", async () => {
    const { user, client } = await approvedCodeClient();
    // The code was issued (a grant without tokens); it is revoked with the rest.
    expect(await disconnectApp({ userId: user.id, clientId: client.client_id })).toEqual({ found: true, consentForgotten: true, grantsRevoked: 1, tokensRevoked: 0 });
    expect(await disconnectApp({ userId: user.id, clientId: client.client_id })).toEqual({ found: true, consentForgotten: false, grantsRevoked: 0, tokensRevoked: 0 });
    expect(await disconnectApp({ userId: user.id, clientId: "no-such-client" })).toMatchObject({ found: false });
    expect((await events(user.id)).map((event) => event.type)).toEqual(["consent.revoked"]);
  });

  it("leaves the same app's access for other users alone", async () => {
    const first = await approvedCodeClient();
    const other = await makeUser();
    await (await db()).consent.create({ data: { userId: other.id, clientId: (await (await db()).client.findUniqueOrThrow({ where: { clientId: first.client.client_id } })).id, scopes: "readonly" } });
    await disconnectApp({ userId: first.user.id, clientId: first.client.client_id });
    expect((await listConnectedApps(other.id)).map((app) => app.clientId)).toEqual([first.client.client_id]);
  });
});
