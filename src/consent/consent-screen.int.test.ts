// "Not you? Switch account" on the consent page (docs/rules/tokens.md#consent): the sealed request belongs to
// the user it was made for, so the page offers the authorization request itself, rebuilt from the seal, for
// the next account.
import { describe, expect, it } from "vitest";
import { loadConsentScreen } from "@/consent/consent-screen";
import { BASE, call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";
import { deviceFormCsrfToken } from "@/device/verify-user-code";

const REDIRECT = "https://client.example.test/callback";

describe("the consent screen's way to switch accounts", () => {
  it("rebuilds the same authorization request (PKCE and nonce included), which another account can then continue", async () => {
    const owner = await makeUser({ name: "Maker" });
    const [first, second] = await Promise.all([makeUser(), makeUser()]);
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code" });
    const query = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      scope: "readwrite openid readonly",
      state: "s-1",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      nonce: "n-1",
    });
    const asked = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie: await sessionCookie(first) } });
    const sealed = new URL(asked.headers.get("location")!, BASE).searchParams.get("request")!;
    const screen = (await loadConsentScreen(sealed, first.id))!;
    expect(screen).toMatchObject({ clientId: client.client_id, clientName: "Test client", ownerName: "Maker", scopes: ["readonly", "readwrite", "openid"], redirectHost: "client.example.test" });
    const restart = new URL(screen.restartUrl, BASE);
    expect(restart.pathname).toBe("/api/connect/oauth2/auth/");
    expect(Object.fromEntries(restart.searchParams)).toEqual({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      scope: "readonly readwrite openid",
      state: "s-1",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      nonce: "n-1",
    });
    // The seal is the first user's only; the rebuilt request leads the second user to a consent of their own.
    expect(await loadConsentScreen(sealed, second.id)).toBeNull();
    const again = await call("GET", screen.restartUrl, { headers: { cookie: await sessionCookie(second) } });
    const resealed = new URL(again.headers.get("location")!, BASE).searchParams.get("request")!;
    expect(await loadConsentScreen(resealed, second.id)).toMatchObject({ clientId: client.client_id, scopes: ["readonly", "readwrite", "openid"] });
  });

  it("rebuilds a request without PKCE or nonce without them: no empty code_challenge or nonce is invented", async () => {
    const owner = await makeUser();
    const user = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "implicit" });
    const query = new URLSearchParams({ response_type: "token", client_id: client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "s-2" });
    const asked = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie: await sessionCookie(user) } });
    const sealed = new URL(asked.headers.get("location")!, BASE).searchParams.get("request")!;
    const restart = new URL((await loadConsentScreen(sealed, user.id))!.restartUrl, BASE);
    expect(restart.pathname).toBe("/api/connect/oauth2/auth/");
    expect(Object.fromEntries(restart.searchParams)).toEqual(Object.fromEntries(query));
  });

  it("sends a device approval back to the device page with the code the person typed", async () => {
    const owner = await makeUser();
    const user = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
    const started = await call("POST", "/api/connect/oauth2/device/", { body: { client_id: client.client_id, scope: "readonly" } });
    const { user_code } = started.json as { user_code: string };
    const typed = await call("POST", "/device/verify", {
      headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie: await sessionCookie(user) },
      raw: new URLSearchParams({ user_code, csrf: deviceFormCsrfToken(user.id) }).toString(),
    });
    expect(typed.status).toBe(303);
    const sealed = new URL(typed.headers.get("location")!, BASE).searchParams.get("request")!;
    expect(await loadConsentScreen(sealed, user.id)).toMatchObject({ redirectHost: null, userCode: user_code, restartUrl: `/device?user_code=${user_code}` });
  });
});
