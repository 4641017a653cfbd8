// Details of the OAuth side that the endpoint tests do not pin down: the sealed authorization request and
// its consent screen (docs/rules/tokens.md#consent), the sliding window of the failed-attempt limit
// (docs/rules/accounts.md#limits), the fields introspection answers (RFC 7662), and how the password grant
// reads its username.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { consentCsrfToken, csrfTokenMatches, openRequest, sealRequest } from "@/oauth/authorization-request";
import { loadConsentScreen } from "@/consent/consent-screen";
import { deleteOwnClient } from "@/clients/manage-clients";
import { OAUTH_ERROR_STATUS, oauthError } from "@/oauth/errors";
import { revokeGrant } from "@/oauth/tokens";
import { digest } from "@/secrets";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";

afterEach(() => resetClock());

const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test:8443/callback";

async function sealedFor() {
  const owner = await makeUser({ name: "Client Owner" });
  const user = await makeUser();
  const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", name: "Sealed App", redirectUris: [REDIRECT] });
  const request = { clientId: client.client_id, userId: user.id, responseType: "code" as const, redirectUri: REDIRECT, scopes: ["readonly" as const, "readwrite" as const], state: "s", codeChallenge: null };
  return { owner, user, client, request, sealed: sealRequest(request) };
}

describe("the sealed authorization request", () => {
  it("opens for its user within ten minutes, with everything it was sealed with", async () => {
    const s = await sealedFor();
    const opened = openRequest(s.sealed, s.user.id);
    expect(opened).toEqual({ ...s.request, expiresAt: expect.any(Number) });
    expect(opened!.expiresAt - nowMs()).toBeGreaterThan(10 * 60 * 1000 - 5_000);
    expect(opened!.expiresAt - nowMs()).toBeLessThanOrEqual(10 * 60 * 1000);
    advanceClock(opened!.expiresAt - nowMs() - 1_000);
    expect(openRequest(s.sealed, s.user.id)).not.toBeNull();
    advanceClock(opened!.expiresAt - nowMs());
    expect(openRequest(s.sealed, s.user.id)).toBeNull();
  });

  it("does not open for another user, altered, cut, extended, or with a body that is not JSON", async () => {
    const s = await sealedFor();
    const [body, mac] = s.sealed.split(".") as [string, string];
    expect(openRequest(s.sealed, s.user.id + 1)).toBeNull();
    const flipped = `${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
    expect(openRequest(`${body}.${flipped}`, s.user.id)).toBeNull();
    expect(openRequest(`${body}.`, s.user.id)).toBeNull();
    expect(openRequest(`.${mac}`, s.user.id)).toBeNull();
    expect(openRequest(body, s.user.id)).toBeNull();
    expect(openRequest(`${s.sealed}.extra`, s.user.id)).toBeNull();
    expect(openRequest("", s.user.id)).toBeNull();
    const other = sealRequest({ ...s.request, state: "changed" });
    expect(openRequest(`${other.split(".")[0]}.${mac}`, s.user.id)).toBeNull();
  });

  it("has a CSRF token bound to the user and to this exact sealed request", async () => {
    const s = await sealedFor();
    const csrf = consentCsrfToken(s.user.id, s.sealed);
    expect(csrf).toMatch(/^[\w-]{43}$/);
    expect(csrfTokenMatches(s.user.id, s.sealed, csrf)).toBe(true);
    expect(csrfTokenMatches(s.user.id + 1, s.sealed, csrf)).toBe(false);
    expect(csrfTokenMatches(s.user.id, sealRequest({ ...s.request, state: `${s.request.state}-other` }), csrf)).toBe(false);
    expect(csrfTokenMatches(s.user.id, s.sealed, csrf.slice(1))).toBe(false);
    expect(csrfTokenMatches(s.user.id, s.sealed, "")).toBe(false);
  });
});

describe("the consent screen", () => {
  it("names the client, its owner, the scopes and the redirect host, with the form's CSRF token", async () => {
    const s = await sealedFor();
    expect(await loadConsentScreen(s.sealed, s.user.id)).toEqual({
      clientId: s.client.client_id,
      clientName: "Sealed App",
      ownerName: "Client Owner",
      unverified: false, // registered by a person, not by itself (docs/rules/tokens.md#dynamic-registration)
      documentHost: null, // not named by a metadata document (docs/rules/tokens.md#client-id-metadata-documents)
      logoUri: null,
      restartUrl: expect.stringMatching(/^\/api\/connect\/oauth2\/auth\/\?response_type=code&client_id=/),
      scopes: ["readonly", "readwrite"],
      redirectHost: "client.example.test:8443",
      csrf: consentCsrfToken(s.user.id, s.sealed),
      userCode: null, // not a device-flow approval
    });
  });

  it("shows nothing for another user, an empty or expired request, or a client deleted since", async () => {
    const s = await sealedFor();
    expect(await loadConsentScreen(s.sealed, s.user.id + 1)).toBeNull();
    expect(await loadConsentScreen("", s.user.id)).toBeNull();
    await deleteOwnClient({ ownerId: s.owner.id, clientId: s.client.client_id });
    expect(await loadConsentScreen(s.sealed, s.user.id)).toBeNull();
    const t = await sealedFor();
    advanceClock(10 * 60 * 1000 + 1_000);
    expect(await loadConsentScreen(t.sealed, t.user.id)).toBeNull();
  });
});

describe("the failed-attempt limit's window", () => {
  it("slides: failures leave it fifteen minutes after they happened, and Retry-After says when the oldest leaves", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const attempt = (password: string) =>
      call("POST", TOKEN, { body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: owner.email, password } });
    for (let i = 0; i < 5; i++) expect((await attempt("wrong")).status).toBe(400);
    advanceClock(10 * 60 * 1000);
    for (let i = 0; i < 5; i++) expect((await attempt("wrong")).status).toBe(400);
    const limited = await attempt(owner.password);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(290);
    expect(retryAfter).toBeLessThanOrEqual(300);
    // Nine failures are not a limit: after the first five leave, the right password works again.
    advanceClock(retryAfter * 1000 + 1_000);
    expect((await attempt(owner.password)).status).toBe(200);
  });

  it("nine failures do not limit: the tenth wrong try still gets its invalid_grant", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const attempt = (password: string) =>
      call("POST", TOKEN, { body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: owner.email, password } });
    for (let i = 0; i < 9; i++) await attempt("wrong");
    expect((await attempt("wrong")).json).toEqual({ error: "invalid_grant" });
    expect((await attempt(owner.password)).status).toBe(429);
  });
});

describe("the password grant's username", () => {
  it("is the e-mail, trimmed and in any case", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const res = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: `  ${owner.email.toUpperCase()} `, password: owner.password },
    });
    expect(res.status).toBe(200);
    expect(res.json.user).toBe(`/api/user/${owner.id}/`);
  });
});

describe("introspection answers (RFC 7662 2.2)", () => {
  const introspect = (s: Awaited<ReturnType<typeof passwordSession>>, token: string, hint?: string) =>
    call("POST", "/api/connect/oauth2/introspect/", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      raw: new URLSearchParams({ token, client_id: s.client.client_id, client_secret: s.client.client_secret!, ...(hint ? { token_type_hint: hint } : {}) }).toString(),
    });

  it("exactly these fields for an access token and for a refresh token", async () => {
    const s = await passwordSession("readwrite");
    const seconds = Math.floor(nowMs() / 1000);
    const access = (await introspect(s, s.accessToken)).json as Record<string, unknown>;
    expect(access).toEqual({
      active: true,
      scope: "readwrite",
      client_id: s.client.client_id,
      username: s.user.email,
      token_type: "Bearer",
      exp: access.iat as number + 3600,
      iat: expect.any(Number),
      sub: String(s.user.id),
      iss: "http://localhost:3000",
      aud: "http://localhost:3000/api", // RFC 8707: every access token is for the one resource
    });
    expect(Math.abs((access.iat as number) - seconds)).toBeLessThanOrEqual(5);
    const refresh = (await introspect(s, s.refreshToken, "refresh_token")).json as Record<string, unknown>;
    expect(refresh).toMatchObject({ active: true, token_type: "refresh_token", scope: "readwrite", exp: (refresh.iat as number) + 30 * 24 * 3600 });
  });

  it("finds a refresh token sent with the access_token hint, and an access token sent with the refresh_token hint", async () => {
    const s = await passwordSession();
    expect((await introspect(s, s.refreshToken, "access_token")).json).toMatchObject({ active: true, token_type: "refresh_token" });
    expect((await introspect(s, s.accessToken, "refresh_token")).json).toMatchObject({ active: true, token_type: "Bearer" });
  });
});

describe("revocation and grants", () => {
  it("revoking one access token leaves the grant's other access token and refresh token working", async () => {
    const s = await passwordSession();
    const refreshed = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: s.refreshToken, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    const revoked = await call("POST", "/api/connect/oauth2/revoke/", { body: { token: s.accessToken, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect(revoked.status).toBe(200);
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: s.accessToken })).status).toBe(401);
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: String(refreshed.json.access_token) })).status).toBe(200);
    const next = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: refreshed.json.refresh_token, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect(next.status).toBe(200);
  });

  it("a code whose grant was revoked before the exchange gets no tokens", async () => {
    const owner = await makeUser();
    const user = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", firstParty: true });
    const cookie = (await import("@/testing/session")).sessionCookie;
    const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: "https://client.example.test/callback", scope: "readonly", state: "s" });
    const issued = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie: await cookie(user) } });
    const code = new URL(issued.headers.get("location")!).searchParams.get("code")!;
    const row = await (await db()).authorizationCode.findUniqueOrThrow({ where: { digest: digest(code) } });
    expect(await revokeGrant(row.grantId)).toBe(1);
    expect(await revokeGrant(row.grantId)).toBe(0);
    const res = await call("POST", TOKEN, {
      body: { grant_type: "authorization_code", code, redirect_uri: "https://client.example.test/callback", client_id: client.client_id, client_secret: client.client_secret },
    });
    expect({ status: res.status, body: res.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    expect(await (await db()).accessToken.count({ where: { grantId: row.grantId } })).toBe(0);
  });
});

describe("OAuth errors", () => {
  it("carry the status of their RFC 6749 code, and the detail only for the log", () => {
    const error = oauthError("invalid_grant", "code replayed");
    expect({ status: error.status, error: error.error, code: error.code, detail: error.detail, headers: error.headers }).toEqual({
      status: 400,
      error: "invalid_grant",
      code: "invalid_grant",
      detail: "code replayed",
      headers: {},
    });
    expect(OAUTH_ERROR_STATUS).toMatchObject({ invalid_client: 401, access_denied: 403, server_error: 500, temporarily_unavailable: 503 });
  });
});
