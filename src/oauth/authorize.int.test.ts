import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";
import { s256 } from "@/oauth/pkce";
import { signOutEverywhere } from "@/users/sign-out-everywhere";

const AUTH = "/api/connect/oauth2/auth/";
const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test/callback";
const ISS = "http://localhost:3000";
const VERIFIER = "verifier-".padEnd(64, "x");

afterEach(() => resetClock());

type Setup = Awaited<ReturnType<typeof setup>>;

async function setup(grantType: "authorization_code" | "implicit" | "password" = "authorization_code", extra: { isPublic?: boolean; firstParty?: boolean; redirectUris?: string[] } = {}) {
  const owner = await makeUser({ name: "Client Owner" });
  const user = await makeUser({ name: "Resource Owner" });
  const client = await makeClient({ ownerId: owner.id, grantType, ...extra });
  return { owner, user, client, cookie: await sessionCookie(user) };
}

function authorizeUrl(s: Setup, params: Record<string, string | null> = {}) {
  const query = new URLSearchParams();
  const all: Record<string, string | null> = {
    response_type: s.client.grant_type === "implicit" ? "token" : "code",
    client_id: s.client.client_id,
    redirect_uri: REDIRECT,
    scope: "readonly",
    state: "st-123",
    ...params,
  };
  for (const [key, value] of Object.entries(all)) if (value !== null) query.set(key, value);
  return `${AUTH}?${query}`;
}

const authorize = (s: Setup, params: Record<string, string | null> = {}, cookie: string | null = s.cookie) =>
  call("GET", authorizeUrl(s, params), { headers: cookie ? { cookie } : {} });

/** Follows the consent page by posting the form the page would render. */
async function approve(s: Setup, location: string, decision = "approve", cookie = s.cookie) {
  const sealed = new URL(location, ISS).searchParams.get("request")!;
  const { consentCsrfToken } = await import("@/oauth/authorization-request");
  const form = new URLSearchParams({ request: sealed, csrf: consentCsrfToken(s.user.id, sealed), decision });
  return call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie }, raw: form.toString() });
}

async function codeFor(s: Setup, params: Record<string, string | null> = {}) {
  const first = await authorize(s, params);
  const location = first.headers.get("location")!;
  const final = location.startsWith("/consent") ? await approve(s, location) : first;
  return new URL(final.headers.get("location")!).searchParams.get("code")!;
}

const exchange = (s: Setup, code: string, extra: Record<string, string> = {}) =>
  call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: s.client.client_id, ...(s.client.client_secret ? { client_secret: s.client.client_secret } : {}), ...extra } });

describe("authorization endpoint: errors that must never redirect", () => {
  it.each([
    ["signed in", true],
    ["signed out, before asking anyone to sign in", false],
  ])("shows an HTML error page for an unknown client, %s", async (_name, signedIn) => {
    const s = await setup();
    for (const clientId of ["no-such-client", ""]) {
      const res = await authorize(s, { client_id: clientId }, signedIn ? s.cookie : null);
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.text).toContain("Unknown application");
      // For developers: the OAuth error code and the client_id (docs/rules/pages.md#error-pages).
      if (clientId) expect(res.text).toContain(`<dt>Error</dt><dd>invalid_client</dd><dt>client_id</dt><dd>${clientId}</dd>`);
    }
  });

  it.each([
    ["an unregistered URI", "https://evil.example/callback"],
    ["a URI differing by a trailing slash", REDIRECT + "/"],
    ["a URI with an extra query", REDIRECT + "?x=1"],
  ])("shows an error page for %s, even signed out", async (_name, uri) => {
    const s = await setup();
    const res = await authorize(s, { redirect_uri: uri }, null);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.text).toContain("Invalid redirect URI");
    expect(res.text).toContain(`<dt>Error</dt><dd>invalid_request</dd><dt>client_id</dt><dd>${s.client.client_id}</dd>`);
  });

  it("shows the redirect_uri received, and the registered ones to the client's owner signed in only (docs/rules/pages.md#error-pages)", async () => {
    const s = await setup();
    const wrong = "https://client.example.test/callback/other";
    const registered = `<dt>Registered (you own this client)</dt><dd>${REDIRECT}</dd>`;
    for (const cookie of [null, s.cookie]) {
      const res = await authorize(s, { redirect_uri: wrong }, cookie);
      expect(res.status).toBe(400);
      expect(res.text).toContain(`<dt>redirect_uri received</dt><dd>${wrong}</dd>`);
      expect(res.text).not.toContain(registered);
      expect(res.text).not.toContain(`<dd>${REDIRECT}</dd>`);
    }
    const owner = await authorize(s, { redirect_uri: wrong }, await sessionCookie(s.owner));
    expect(owner.status).toBe(400);
    expect(owner.text).toContain(`<dt>redirect_uri received</dt><dd>${wrong}</dd>`);
    expect(owner.text).toContain(registered);
    // What was received is escaped like everything the page echoes.
    const hostile = await authorize(s, { redirect_uri: "https://x.example/<b>" }, null);
    expect(hostile.text).toContain("<dd>https://x.example/&lt;b&gt;</dd>");
  });

  it("requires redirect_uri for the code flow", async () => {
    const s = await setup();
    const res = await authorize(s, { redirect_uri: null });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
  });
});

describe("authorization endpoint: errors redirected to the client", () => {
  it.each([
    ["a missing state", { state: null }, "invalid_request", null],
    ["a missing scope", { scope: null }, "invalid_request", "st-123"],
    ["an unknown scope", { scope: "readonly admin" }, "invalid_scope", "st-123"],
    ["an unsupported response_type", { response_type: "id_token" }, "unsupported_response_type", "st-123"],
    ["a response_type that is not the client's", { response_type: "token" }, "unauthorized_client", "st-123"],
    ["a plain PKCE challenge", { code_challenge: s256(VERIFIER), code_challenge_method: "plain" }, "invalid_request", "st-123"],
    ["a challenge without method (plain by default)", { code_challenge: s256(VERIFIER) }, "invalid_request", "st-123"],
  ])("redirects %s as ?error=", async (_name, params, error, state) => {
    const s = await setup();
    const res = await authorize(s, params as Record<string, string | null>);
    expect(res.status).toBe(302);
    const location = res.headers.get("location")!;
    const target = s.client.grant_type === "implicit" || (params as { response_type?: string }).response_type === "token" ? new URLSearchParams(new URL(location).hash.slice(1)) : new URL(location).searchParams;
    expect(location.startsWith(REDIRECT)).toBe(true);
    expect(target.get("error")).toBe(error);
    expect(target.get("state")).toBe(state);
    expect(target.get("iss")).toBe(ISS);
  });

  it("redirects implicit errors in the fragment with state", async () => {
    const s = await setup("implicit");
    const res = await authorize(s, { scope: "nope" });
    const url = new URL(res.headers.get("location")!);
    expect(url.search).toBe("");
    expect(Object.fromEntries(new URLSearchParams(url.hash.slice(1)))).toEqual({ error: "invalid_scope", state: "st-123", iss: ISS });
  });

  it("refuses a wrong client_secret on an implicit request with unauthorized_client", async () => {
    const s = await setup("implicit");
    const res = await authorize(s, { client_secret: "wrong" });
    expect(new URLSearchParams(new URL(res.headers.get("location")!).hash.slice(1)).get("error")).toBe("unauthorized_client");
  });

  it("requires PKCE for a public code client", async () => {
    const s = await setup("authorization_code", { isPublic: true });
    const res = await authorize(s);
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
  });

  it("shows a password client's token request error on the landing page, never a token", async () => {
    const s = await setup("password");
    const res = await authorize(s, { response_type: "token", redirect_uri: null });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!, "http://localhost:3000");
    expect(location.pathname).toBe("/");
    expect(Object.fromEntries(location.searchParams)).toEqual({ error: "unauthorized_client", client: "Test client", client_id: s.client.client_id });
  });
});

describe("authorization endpoint: a signed-out visitor's invalid request (RFC 9700 4.11.2)", () => {
  it.each([
    ["a missing state", "authorization_code", { state: null }, "invalid_request"],
    ["a missing scope", "authorization_code", { scope: null }, "invalid_request"],
    ["an unknown scope", "authorization_code", { scope: "readonly admin" }, "invalid_scope"],
    ["an unsupported response_type", "authorization_code", { response_type: "id_token" }, "unsupported_response_type"],
    ["a response_type that is not the client's", "authorization_code", { response_type: "token" }, "unauthorized_client"],
    ["a plain PKCE challenge", "authorization_code", { code_challenge: s256(VERIFIER), code_challenge_method: "plain" }, "invalid_request"],
    ["an implicit request with a wrong client_secret", "implicit", { client_secret: "wrong" }, "unauthorized_client"],
    ["an implicit request with an unknown scope", "implicit", { scope: "nope" }, "invalid_scope"],
  ] as const)("shows the error page for %s instead of redirecting: the endpoint is no open redirector", async (_name, grant, params, error) => {
    const s = await setup(grant);
    const res = await authorize(s, params as Record<string, string | null>, null);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.text).toContain(`<dt>Error</dt><dd>${error}</dd><dt>client_id</dt><dd>${s.client.client_id}</dd>`);
    expect(res.text).not.toContain(REDIRECT);
  });

  it("still redirects the same invalid request of a signed-in user to the client", async () => {
    const s = await setup();
    const res = await authorize(s, { scope: "readonly admin" });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_scope");
  });
});

describe("authorization endpoint: sign-in and consent", () => {
  it("sends a signed-out user to /login and back to the same request, without the client_secret", async () => {
    const s = await setup("implicit");
    const res = await authorize(s, { client_secret: s.client.client_secret }, null);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!, ISS);
    expect(location.pathname).toBe("/login");
    const back = location.searchParams.get("callbackUrl")!;
    expect(back.startsWith(AUTH + "?")).toBe(true);
    expect(back).not.toContain("client_secret");
    expect(new URLSearchParams(back.split("?")[1]).get("state")).toBe("st-123");
  });

  it("asks for consent, then issues a code with state and iss on approval (303)", async () => {
    const s = await setup();
    const first = await authorize(s);
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toMatch(/^\/consent\?request=/);
    const decided = await approve(s, first.headers.get("location")!);
    expect(decided.status).toBe(303);
    const url = new URL(decided.headers.get("location")!);
    expect(url.origin + url.pathname).toBe(REDIRECT);
    expect(url.searchParams.get("state")).toBe("st-123");
    expect(url.searchParams.get("iss")).toBe(ISS);
    expect(url.searchParams.get("code")!.length).toBeGreaterThanOrEqual(43);
  });

  it("answers Deny with access_denied and state", async () => {
    const s = await setup();
    const first = await authorize(s);
    const denied = await approve(s, first.headers.get("location")!, "deny");
    expect(denied.status).toBe(303);
    const url = new URL(denied.headers.get("location")!);
    expect(url.searchParams.get("error")).toBe("access_denied");
    expect(url.searchParams.get("state")).toBe("st-123");
    expect(url.searchParams.get("code")).toBeNull();
  });

  it("remembers consent for a confidential client until a new scope is asked for", async () => {
    const s = await setup();
    await codeFor(s);
    const again = await authorize(s);
    expect(again.status).toBe(302);
    const url = new URL(again.headers.get("location")!);
    expect(url.origin + url.pathname).toBe(REDIRECT);
    // The code issued without asking is a real one: it exchanges for the user's token.
    const exchanged = await exchange(s, url.searchParams.get("code")!);
    expect(exchanged.status).toBe(200);
    expect(exchanged.json).toMatchObject({ user: `/api/user/${s.user.id}/`, scopes: ["readonly"] });
    const wider = await authorize(s, { scope: "readonly readwrite" });
    expect(wider.headers.get("location")).toMatch(/^\/consent\?/);
  });

  it.each([
    ["an implicit client", "implicit" as const, {}, {}],
    ["a public code client", "authorization_code" as const, { isPublic: true }, { code_challenge: s256(VERIFIER), code_challenge_method: "S256" }],
  ])("asks %s every time: its consent is never remembered", async (_name, grantType, extra, params) => {
    const s = await setup(grantType, extra);
    const first = await authorize(s, params);
    expect(first.headers.get("location")).toMatch(/^\/consent\?/);
    const approved = await approve(s, first.headers.get("location")!);
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")!.startsWith(REDIRECT)).toBe(true);
    const second = await authorize(s, params);
    expect(second.status).toBe(302);
    expect(second.headers.get("location")).toMatch(/^\/consent\?request=/);
  });

  it("skips consent for a first-party client, and the code it gets is a real one", async () => {
    const s = await setup("authorization_code", { firstParty: true });
    const res = await authorize(s);
    expect(res.status).toBe(302);
    const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
    const exchanged = await exchange(s, code);
    expect(exchanged.status).toBe(200);
    expect(exchanged.json).toMatchObject({ user: `/api/user/${s.user.id}/`, scopes: ["readonly"] });
  });

  it("refuses a consent post without our Origin, with a wrong CSRF token, or from another user", async () => {
    const s = await setup();
    const location = (await authorize(s)).headers.get("location")!;
    const sealed = new URL(location, ISS).searchParams.get("request")!;
    const { consentCsrfToken } = await import("@/oauth/authorization-request");
    const post = (headers: Record<string, string>, csrf: string) =>
      call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, raw: new URLSearchParams({ request: sealed, csrf, decision: "approve" }).toString() });
    const good = consentCsrfToken(s.user.id, sealed);
    expect((await post({ origin: "https://evil.example", cookie: s.cookie }, good)).status).toBe(403);
    expect((await post({ origin: ISS, cookie: s.cookie }, "forged")).status).toBe(403);
    const intruder = await makeUser();
    expect((await post({ origin: ISS, cookie: await sessionCookie(intruder) }, consentCsrfToken(intruder.id, sealed))).status).toBe(400);
    // A tampered request fails its seal.
    const tampered = sealed.replace(/^./, (c) => (c === "a" ? "b" : "a"));
    const res = await call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie: s.cookie }, raw: new URLSearchParams({ request: tampered, csrf: consentCsrfToken(s.user.id, tampered), decision: "approve" }).toString() });
    expect(res.status).toBe(400);
  });

  it("issues an implicit token in the fragment: access_token, Bearer, state, expires_in, scope, never a refresh token", async () => {
    const s = await setup("implicit");
    const first = await authorize(s, { scope: "readonly readwrite" });
    const decided = await approve(s, first.headers.get("location")!);
    expect(decided.headers.get("referrer-policy")).toBe("no-referrer");
    const url = new URL(decided.headers.get("location")!);
    expect(url.search).toBe("");
    const fragment = Object.fromEntries(new URLSearchParams(url.hash.slice(1)));
    expect(Object.keys(fragment).sort()).toEqual(["access_token", "expires_in", "iss", "scope", "state", "token_type"]);
    expect(fragment).toMatchObject({ token_type: "Bearer", state: "st-123", expires_in: "3600", scope: "readonly readwrite" });
    const me = await call("GET", `/api/user/${s.user.id}/`, { token: fragment.access_token });
    expect(me.status).toBe(200);
  });

  it("uses the first registered URI for implicit without redirect_uri", async () => {
    const s = await setup("implicit", { redirectUris: ["https://first.example/cb", "https://second.example/cb"] });
    const first = await authorize(s, { redirect_uri: null });
    const decided = await approve(s, first.headers.get("location")!);
    expect(decided.headers.get("location")!.startsWith("https://first.example/cb#access_token=")).toBe(true);
  });

  it("ends browser sessions when the user signs out everywhere", async () => {
    const s = await setup();
    await signOutEverywhere(s.user.id);
    const res = await authorize(s);
    expect(new URL(res.headers.get("location")!, ISS).pathname).toBe("/login");
  });
});

describe("authorization_code grant", () => {
  it("stores only the code's SHA-256 digest, never the code", async () => {
    const s = await setup();
    const code = await codeFor(s);
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const { db } = await import("@/db/client");
    const { digest } = await import("@/secrets");
    const rows = await (await db()).authorizationCode.findMany({ where: { userId: s.user.id } });
    expect(rows.map((row) => row.digest)).toEqual([digest(code)]);
    expect(JSON.stringify(rows)).not.toContain(code);
    // The digest is what the exchange looks up: the code itself still works.
    expect((await exchange(s, code)).status).toBe(200);
  });

  it("exchanges a code for the token record with a refresh token", async () => {
    const s = await setup();
    const res = await exchange(s, await codeFor(s));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ scopes: ["readonly"], user: `/api/user/${s.user.id}/`, token_type: "Bearer", expires_in: 3600 });
    expect(typeof res.json.refresh_token).toBe("string");
  });

  it("a replayed code is invalid_grant and revokes every token issued from it", async () => {
    const s = await setup();
    const code = await codeFor(s);
    const first = await exchange(s, code);
    const rotated = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: first.json.refresh_token, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect(rotated.status).toBe(200);
    const replay = await exchange(s, code);
    expect(replay.status).toBe(400);
    expect(replay.json).toEqual({ error: "invalid_grant" });
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: String(first.json.access_token) })).status).toBe(401);
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: String(rotated.json.access_token) })).status).toBe(401);
  });

  it("expires a code after 60 seconds", async () => {
    const s = await setup();
    const code = await codeFor(s);
    advanceClock(61_000);
    expect((await exchange(s, code)).json).toEqual({ error: "invalid_grant" });
  });

  it("binds the code to its redirect URI and its client", async () => {
    const s = await setup();
    const code = await codeFor(s);
    expect((await exchange(s, code, { redirect_uri: "https://client.example.test/other" })).json).toEqual({ error: "invalid_grant" });
    const other = await setup();
    expect((await exchange(other, code)).json).toEqual({ error: "invalid_grant" });
    expect((await exchange(s, code)).status).toBe(200);
  });

  it("PKCE: the right verifier succeeds, a wrong or missing one fails", async () => {
    const s = await setup();
    const challenge = { code_challenge: s256(VERIFIER), code_challenge_method: "S256" };
    expect((await exchange(s, await codeFor(s, challenge), { code_verifier: "wrong".padEnd(50, "y") })).json).toEqual({ error: "invalid_grant" });
    expect((await exchange(s, await codeFor(s, challenge))).json).toEqual({ error: "invalid_grant" });
    expect((await exchange(s, await codeFor(s, challenge), { code_verifier: VERIFIER })).status).toBe(200);
  });

  it("PKCE downgrade: a code_verifier for a code issued without a challenge is refused", async () => {
    const s = await setup();
    expect((await exchange(s, await codeFor(s), { code_verifier: VERIFIER })).json).toEqual({ error: "invalid_grant" });
  });

  it("a public client exchanges with client_id and verifier only", async () => {
    const s = await setup("authorization_code", { isPublic: true });
    expect(s.client.client_secret).toBeNull();
    const code = await codeFor(s, { code_challenge: s256(VERIFIER), code_challenge_method: "S256" });
    const res = await exchange(s, code, { code_verifier: VERIFIER });
    expect(res.status).toBe(200);
  });

  it("refuses the code grant to a password client", async () => {
    const s = await setup("password");
    expect((await exchange(s, "whatever")).json).toEqual({ error: "unauthorized_client" });
  });
});
