// Rules of registered clients beyond the registration itself, against the real route handlers and database:
// a registered `scope` bounds every request the client makes (docs/rules/tokens.md#scopes-of-registered-clients:
// the authorization endpoint, PAR, the device authorization endpoint and every token request, a refresh
// included); a loopback redirect URI matches with any port (RFC 8252 7.3, docs/rules/tokens.md#redirect-uris);
// application_type is stored and answered (OpenID Connect Registration 2, RFC 7591 3.2.1, RFC 7592 3).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { setEnvForTests, type Env } from "@/env";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { s256 } from "@/oauth/pkce";
import { deviceFormCsrfToken } from "@/device/verify-user-code";
import { call } from "@/testing/app";
import { makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const ISS = "http://localhost:3000";
const REGISTER = "/api/connect/oauth2/register/";
const AUTH = "/api/connect/oauth2/auth/";
const TOKEN = "/api/connect/oauth2/token/";
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const REDIRECT = "https://agent.example.test/callback";
const VERIFIER = "registered-rules-verifier-".padEnd(64, "v");

let previous: Partial<Env>;
beforeAll(() => {
  previous = setEnvForTests({ registration: "open" });
});
afterAll(() => setEnvForTests(previous));

let address = "";
beforeEach(() => {
  address = `198.51.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
});

type Registered = { client_id: string; client_secret?: string; registration_access_token: string; registration_client_uri: string } & Record<string, unknown>;
async function register(body: Record<string, unknown>): Promise<Registered> {
  const res = await call("POST", REGISTER, { body, headers: { "x-forwarded-for": address } });
  expect(res.status).toBe(201);
  return res.json as Registered;
}

const webApp = (extra: Record<string, unknown> = {}) => ({ client_name: "Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", ...extra });
const deviceApp = (extra: Record<string, unknown> = {}) => ({ client_name: "CLI", grant_types: [DEVICE_GRANT, "refresh_token"], response_types: [], token_endpoint_auth_method: "none", ...extra });

const authQuery = (clientId: string, scope: string, redirectUri = REDIRECT) =>
  new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope, state: "s", code_challenge: s256(VERIFIER), code_challenge_method: "S256" });

/** The authorization endpoint for a signed-in person: where it sends the browser. */
async function authorize(cookie: string, query: URLSearchParams): Promise<URL> {
  const res = await call("GET", `${AUTH}?${query}`, { headers: { cookie } });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location")!, ISS);
}

async function approveSealed(userId: number, cookie: string, location: URL): Promise<Response & { location: URL }> {
  const sealed = location.searchParams.get("request")!;
  const res = await call("POST", "/consent/decide", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie },
    raw: new URLSearchParams({ request: sealed, csrf: consentCsrfToken(userId, sealed), decision: "approve" }).toString(),
  });
  return Object.assign(new Response(null, { status: res.status }), { location: new URL(res.headers.get("location")!, ISS) });
}

describe("scopes of registered clients (docs/rules/tokens.md#scopes-of-registered-clients)", () => {
  it("a client registered without scope may ask for any scope", async () => {
    const client = await register(webApp());
    expect(client).not.toHaveProperty("scope");
    const user = await makeUser();
    const cookie = await sessionCookie(user);
    const to = await authorize(cookie, authQuery(client.client_id, "readwrite openid profile email"));
    expect(to.pathname).toBe("/consent");
  });

  it("the authorization endpoint and PAR refuse a scope beyond the registered one with invalid_scope", async () => {
    const client = await register(webApp({ scope: "readonly openid" }));
    expect(client.scope).toBe("readonly openid");
    const user = await makeUser();
    const cookie = await sessionCookie(user);
    const refused = await authorize(cookie, authQuery(client.client_id, "readonly readwrite"));
    expect(refused.origin + refused.pathname).toBe(REDIRECT);
    expect(refused.searchParams.get("error")).toBe("invalid_scope");
    expect((await authorize(cookie, authQuery(client.client_id, "readonly openid"))).pathname).toBe("/consent");

    const pushed = await call("POST", "/api/connect/oauth2/par/", { body: { ...Object.fromEntries(authQuery(client.client_id, "readwrite")) } });
    expect(pushed.status).toBe(400);
    expect(pushed.json).toEqual({ error: "invalid_scope" });
    expect((await call("POST", "/api/connect/oauth2/par/", { body: { ...Object.fromEntries(authQuery(client.client_id, "readonly")) } })).status).toBe(201);
  });

  it("the device authorization endpoint refuses readwrite to a device client registered with readonly, and its default readonly stays allowed", async () => {
    const client = await register(deviceApp({ scope: "readonly" }));
    const beyond = await call("POST", "/api/connect/oauth2/device/", { body: { client_id: client.client_id, scope: "readwrite" } });
    expect(beyond.status).toBe(400);
    expect(beyond.json).toEqual({ error: "invalid_scope" });
    expect((await call("POST", "/api/connect/oauth2/device/", { body: { client_id: client.client_id, scope: "readonly readwrite" } })).json).toEqual({ error: "invalid_scope" });
    expect((await call("POST", "/api/connect/oauth2/device/", { body: { client_id: client.client_id } })).status).toBe(200);

    // A device client registered with openid only has no default: asking without scope is invalid_scope.
    const openidOnly = await register(deviceApp({ scope: "openid" }));
    expect((await call("POST", "/api/connect/oauth2/device/", { body: { client_id: openidOnly.client_id } })).json).toEqual({ error: "invalid_scope" });
  });

  it("the device flow end to end: tokens of the registered scope; a scope beyond it at the token endpoint is invalid_scope and spends nothing", async () => {
    const client = await register(deviceApp({ scope: "readonly" }));
    const started = (await call("POST", "/api/connect/oauth2/device/", { body: { client_id: client.client_id, scope: "readonly" } })).json as { device_code: string; user_code: string };
    const user = await makeUser();
    const cookie = await sessionCookie(user);
    const typed = await call("POST", "/device/verify", {
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie },
      raw: new URLSearchParams({ user_code: started.user_code, csrf: deviceFormCsrfToken(user.id) }).toString(),
    });
    expect((await approveSealed(user.id, cookie, new URL(typed.headers.get("location")!, ISS))).location.pathname).toBe("/device");

    const widened = await call("POST", TOKEN, { body: { grant_type: DEVICE_GRANT, device_code: started.device_code, client_id: client.client_id, scope: "readwrite" } });
    expect(widened.status).toBe(400);
    expect(widened.json).toEqual({ error: "invalid_scope" });
    const tokens = await call("POST", TOKEN, { body: { grant_type: DEVICE_GRANT, device_code: started.device_code, client_id: client.client_id } });
    expect(tokens.status).toBe(200);
    expect(tokens.json).toMatchObject({ scope: "readonly" });
    const refreshed = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: (tokens.json as { refresh_token: string }).refresh_token, client_id: client.client_id, scope: "readwrite" } });
    expect(refreshed.json).toEqual({ error: "invalid_scope" });
  });

  it("a refresh stays within the registered scope after the client narrows it (RFC 7592): without scope it is refused, a narrowing within it works", async () => {
    const client = await register(webApp({ scope: "readonly readwrite" }));
    const user = await makeUser();
    const cookie = await sessionCookie(user);
    const consent = await authorize(cookie, authQuery(client.client_id, "readwrite"));
    const back = await approveSealed(user.id, cookie, consent);
    const code = back.location.searchParams.get("code")!;
    const tokens = await call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: client.client_id } });
    expect(tokens.json).toMatchObject({ scope: "readwrite" });
    const refreshToken = (tokens.json as { refresh_token: string }).refresh_token;

    const path = new URL(client.registration_client_uri).pathname;
    const narrowed = await call("PUT", path, { headers: { authorization: `Bearer ${client.registration_access_token}` }, body: { ...webApp({ scope: "readonly" }), client_id: client.client_id } });
    expect(narrowed.json).toMatchObject({ scope: "readonly" });

    const whole = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: client.client_id } });
    expect(whole.status).toBe(400);
    expect(whole.json).toEqual({ error: "invalid_scope" });
    const within = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: client.client_id, scope: "readonly" } });
    expect(within.status).toBe(200);
    expect(within.json).toMatchObject({ scope: "readonly" });
  });
});

describe("loopback redirect URIs of native clients (RFC 8252 7.3)", () => {
  it("a registered http://127.0.0.1, http://[::1] or http://localhost URI matches the same URI with any port, and nothing else", async () => {
    const client = await register(webApp({ application_type: "native", redirect_uris: ["http://127.0.0.1/cb", "http://[::1]:8080/cb", "http://localhost/cb"] }));
    const user = await makeUser();
    const cookie = await sessionCookie(user);
    for (const uri of ["http://127.0.0.1:53124/cb", "http://127.0.0.1/cb", "http://[::1]:1/cb", "http://[::1]/cb", "http://localhost:65535/cb"]) {
      expect({ uri, to: (await authorize(cookie, authQuery(client.client_id, "readonly", uri))).pathname }).toEqual({ uri, to: "/consent" });
    }
    for (const uri of ["http://127.0.0.1:53124/other", "http://localhost:8080/cb/", "http://127.0.0.2:8080/cb", "http://127.0.0.1:8080/cb?x=1", "https://127.0.0.1:8080/cb", "http://localhost.example:8080/cb", "http://127.0.0.1:99999/cb", "http://127.0.0.1:0x50/cb"]) {
      const res = await call("GET", `${AUTH}?${authQuery(client.client_id, "readonly", uri)}`, { headers: { cookie } });
      expect({ uri, status: res.status }).toEqual({ uri, status: 400 });
    }
  });
});

describe("application_type (OpenID Connect Registration 2)", () => {
  it("is web by default, native when asked; the registration answer and RFC 7592 reads and updates return it; anything else is invalid_client_metadata", async () => {
    const web = await register(webApp());
    expect(web.application_type).toBe("web");
    const native = await register(webApp({ application_type: "native", redirect_uris: ["http://127.0.0.1/cb"] }));
    expect(native.application_type).toBe("native");
    const path = new URL(native.registration_client_uri).pathname;
    const auth = { authorization: `Bearer ${native.registration_access_token}` };
    expect((await call("GET", path, { headers: auth })).json).toMatchObject({ application_type: "native" });
    const updated = await call("PUT", path, { headers: auth, body: { ...webApp({ application_type: "web" }), client_id: native.client_id } });
    expect(updated.json).toMatchObject({ application_type: "web" });
    expect((await call("GET", path, { headers: auth })).json).toMatchObject({ application_type: "web" });
    const bad = await call("POST", REGISTER, { body: webApp({ application_type: "desktop" }), headers: { "x-forwarded-for": address } });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ error: "invalid_client_metadata" });
  });
});
