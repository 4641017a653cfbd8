// OpenID Connect on the authorization code flow (docs/rules/openid-connect.md), against the real route
// handlers and database: discovery, the JWKS, id_tokens verified with jose against the published JWKS (at_hash
// recomputed here, nonce echoed, auth_time from the session), refreshes, UserInfo, prompt/max_age, signing
// keys (encrypted at rest and bound to their row, made once when instances race, rotated with the old key
// still verifying for a day, then gone; rotated and revoked on every instance at once, two server instances in
// their own processes).
//
// Every test that verifies a signature against the JWKS, or that deletes keys, lives in this one file, so
// that no other test file running at the same time can remove a key that a test here is about to verify.
import { createHash, hkdfSync, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  calculateJwkThumbprint,
  CompactEncrypt,
  compactVerify,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
  type JWTPayload,
} from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { setEnvForTests } from "@/env";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { s256 } from "@/oauth/pkce";
import { db, write } from "@/db/client";
import { call } from "@/testing/app";
import { runCli } from "@/testing/cli";
import { grantRow, makeClient, makeUser } from "@/testing/factories";
import { startedInstances, startInstance, type Instance } from "@/testing/instance";
import { captureLog } from "@/testing/log-capture";
import { sessionCookie } from "@/testing/session";
import { ensureSigningKey, forgetLoadedSigningKey, revokeSigningKey, rotateSigningKey } from "@/oidc/keys";
import { Barrier, together } from "@/testing/race";
import { issueAccountToken } from "@/accounts/account-tokens";
import { takeAccountStep } from "@/accounts/lifecycle";
import { signOutEverywhere } from "@/users/sign-out-everywhere";
import { logoutCsrfToken } from "@/logout/logout-request";
import { deliverLogoutsDue } from "@/logout/deliver-logout";
import { authOptions } from "@/auth/options";
import { until } from "@/testing/until";

const AUTH = "/api/connect/oauth2/auth/";
const TOKEN = "/api/connect/oauth2/token/";
const USERINFO = "/api/connect/oauth2/userinfo/";
const REDIRECT = "https://client.example.test/callback";
const ISS = "http://localhost:3000";
const VERIFIER = "oidc-verifier-".padEnd(64, "v");
const seconds = () => Math.floor(nowMs() / 1000);

afterEach(() => resetClock());

async function setup(options: { grantType?: "authorization_code" | "implicit" | "password" | "device_code"; isPublic?: boolean; verified?: boolean; authTime?: number | null } = {}) {
  const owner = await makeUser({ name: "Relying Party Owner" });
  const user = await makeUser({ name: "Olivia Openid" });
  await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: (options.verified ?? true) ? new Date(nowMs()) : null } }));
  const client = await makeClient({ ownerId: owner.id, grantType: options.grantType ?? "authorization_code", isPublic: options.isPublic ?? false });
  const authTime = options.authTime === undefined ? seconds() - 120 : options.authTime;
  return { owner, user, client, authTime, cookie: await sessionCookie(user, 0, authTime) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

function authorizeUrl(s: Setup, params: Record<string, string | null> = {}) {
  const query = new URLSearchParams();
  const all: Record<string, string | null> = {
    response_type: s.client.grant_type === "implicit" ? "token" : "code",
    client_id: s.client.client_id,
    redirect_uri: REDIRECT,
    scope: "openid",
    state: "st-oidc",
    ...params,
  };
  for (const [key, value] of Object.entries(all)) if (value !== null) query.set(key, value);
  return `${AUTH}?${query}`;
}

const authorize = (s: Setup, params: Record<string, string | null> = {}, cookie: string | null = s.cookie) =>
  call("GET", authorizeUrl(s, params), { headers: cookie ? { cookie } : {} });

async function decide(s: Setup, location: string, decision = "approve") {
  const sealed = new URL(location, ISS).searchParams.get("request")!;
  const form = new URLSearchParams({ request: sealed, csrf: consentCsrfToken(s.user.id, sealed), decision });
  return call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie: s.cookie }, raw: form.toString() });
}

async function codeFor(s: Setup, params: Record<string, string | null> = {}) {
  const first = await authorize(s, params);
  const location = first.headers.get("location")!;
  const final = location.startsWith("/consent") ? await decide(s, location) : first;
  const code = new URL(final.headers.get("location")!).searchParams.get("code");
  if (!code) throw new Error(`no code: ${final.headers.get("location")}`);
  return code;
}

const exchange = (s: Setup, code: string) =>
  call("POST", TOKEN, {
    body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: s.client.client_id, ...(s.client.client_secret ? { client_secret: s.client.client_secret } : {}) },
  });

const refresh = (s: Setup, refreshToken: string, scope?: string) =>
  call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: s.client.client_id, client_secret: s.client.client_secret, ...(scope ? { scope } : {}) } });

async function tokensFor(s: Setup, params: Record<string, string | null> = {}) {
  const res = await exchange(s, await codeFor(s, params));
  expect(res.status).toBe(200);
  return res.json as { access_token: string; refresh_token: string; id_token?: string; scope: string };
}

async function jwks(): Promise<JSONWebKeySet> {
  const res = await call("GET", "/api/connect/oauth2/jwks/");
  expect(res.status).toBe(200);
  return res.json as unknown as JSONWebKeySet;
}

/** Verifies an id_token with jose against the JWKS the server publishes right now. */
async function verifyIdToken(idToken: string, audience: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(idToken, createLocalJWKSet(await jwks()), { issuer: ISS, audience, algorithms: ["RS256"], currentDate: new Date(nowMs()) });
  return payload;
}

/** OpenID Connect Core 3.1.3.6, computed here independently of the server's code. */
const atHash = (accessToken: string) => Buffer.from(createHash("sha256").update(accessToken).digest().subarray(0, 16)).toString("base64url");

describe("discovery and the JWKS", () => {
  it("publishes /.well-known/openid-configuration: the RFC 8414 document plus the OpenID fields", async () => {
    const oidc = await call("GET", "/.well-known/openid-configuration");
    const oauth = await call("GET", "/.well-known/oauth-authorization-server");
    expect(oidc.status).toBe(200);
    expect(oidc.headers.get("access-control-allow-origin")).toBe("*");
    for (const [field, value] of Object.entries(oauth.json)) expect(oidc.json[field], field).toEqual(value);
    expect(oidc.json).toMatchObject({
      issuer: ISS,
      authorization_endpoint: `${ISS}/api/connect/oauth2/auth/`,
      token_endpoint: `${ISS}/api/connect/oauth2/token/`,
      jwks_uri: `${ISS}/api/connect/oauth2/jwks/`,
      userinfo_endpoint: `${ISS}/api/connect/oauth2/userinfo/`,
      device_authorization_endpoint: `${ISS}/api/connect/oauth2/device/`,
      id_token_signing_alg_values_supported: ["RS256"],
      subject_types_supported: ["public"],
      prompt_values_supported: ["none", "login", "consent"],
      scopes_supported: ["readonly", "readwrite", "openid", "profile", "email"],
      response_types_supported: ["code", "token"],
    });
    expect(oidc.json.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"]));
    expect(oidc.json.claims_supported).toEqual(expect.arrayContaining(["sub", "auth_time", "nonce", "at_hash", "name", "email", "email_verified"]));
    expect(oauth.json.userinfo_endpoint).toBeUndefined();
  });

  it("publishes RSA public keys only, each with its kid, alg RS256 and use sig", async () => {
    await ensureSigningKey();
    const set = await jwks();
    expect(set.keys.length).toBeGreaterThanOrEqual(1);
    for (const key of set.keys) {
      expect(key).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", kid: expect.any(String), n: expect.any(String), e: "AQAB" });
      for (const privatePart of ["d", "p", "q", "dp", "dq", "qi"]) expect(key).not.toHaveProperty(privatePart);
    }
  });
});

describe("the id_token of the code flow", () => {
  it("is RS256 with a published kid, with iss, sub, aud, exp, iat, auth_time, amr pwd, nonce, at_hash, sid and the claims of profile and email; no acr", async () => {
    const s = await setup();
    const tokens = await tokensFor(s, { scope: "openid profile email readonly", nonce: "n-0S6_WzA2Mj" });
    expect(tokens.scope).toBe("readonly openid profile email");
    const header = decodeProtectedHeader(tokens.id_token!);
    expect(header.alg).toBe("RS256");
    expect((await jwks()).keys.map((key) => key.kid)).toContain(header.kid);
    const claims = await verifyIdToken(tokens.id_token!, s.client.client_id);
    expect(claims).toEqual({
      iss: ISS,
      sub: String(s.user.id),
      aud: s.client.client_id,
      iat: expect.any(Number),
      exp: expect.any(Number),
      auth_time: s.authTime,
      amr: ["pwd"],
      nonce: "n-0S6_WzA2Mj",
      at_hash: atHash(tokens.access_token),
      sid: expect.stringMatching(/^[\w-]{22}$/), // the browser session's (docs/rules/openid-connect.md#back-channel-logout)
      name: "Olivia Openid",
      email: s.user.email,
      email_verified: true,
    });
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(Math.abs(claims.iat! - seconds())).toBeLessThanOrEqual(5);
  });

  it("carries only sub (and sid) for openid alone, no nonce when none was sent; email_verified false only for a token from before an address had to be confirmed", async () => {
    const s = await setup();
    const plain = await verifyIdToken((await tokensFor(s, { scope: "openid" })).id_token!, s.client.client_id);
    expect(Object.keys(plain).sort()).toEqual(["amr", "at_hash", "aud", "auth_time", "exp", "iat", "iss", "sid", "sub"]);
    // acr_values is a voluntary request this service does not act on (OpenID Connect Core 3.1.2.1): no acr.
    const asked = await verifyIdToken((await tokensFor(s, { scope: "openid", acr_values: "urn:example:loa:2" })).id_token!, s.client.client_id);
    expect(asked).not.toHaveProperty("acr");
    expect(asked.amr).toEqual(["pwd"]);
    const withEmail = await verifyIdToken((await tokensFor(s, { scope: "openid email" })).id_token!, s.client.client_id);
    expect(withEmail).toMatchObject({ email: s.user.email, email_verified: true });
    expect(withEmail.name).toBeUndefined();
    // An account whose address is not confirmed gets no token (docs/rules/accounts.md#unconfirmed-accounts);
    // one it got before that rule tells UserInfo the truth.
    const u = await setup({ verified: false });
    const clientRowId = (await (await db()).client.findUniqueOrThrow({ where: { clientId: u.client.client_id } })).id;
    const before = await grantRow({ userId: u.user.id, clientId: clientRowId, grantType: "authorization_code", scopes: ["openid", "email"] });
    expect((await call("GET", USERINFO, { token: before.accessToken })).json).toEqual({ sub: String(u.user.id), email: u.user.email, email_verified: false });
  });

  it("is not issued without openid, nor to password or implicit grants that hold openid", async () => {
    const s = await setup();
    const oauthOnly = await tokensFor(s, { scope: "readonly profile" });
    expect(oauthOnly.id_token).toBeUndefined();

    const p = await setup({ grantType: "password" });
    const password = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: p.client.client_id, client_secret: p.client.client_secret, username: p.owner.email, password: p.owner.password, scope: "openid readonly" },
    });
    expect(password.status).toBe(200);
    expect(password.json.scope).toBe("readonly openid");
    expect(password.json.id_token).toBeUndefined();
    const passwordRefresh = await refresh(p, String(password.json.refresh_token));
    expect(passwordRefresh.status).toBe(200);
    expect(passwordRefresh.json.id_token).toBeUndefined();

    const i = await setup({ grantType: "implicit" });
    const first = await authorize(i, { scope: "openid" });
    const fragment = new URLSearchParams(new URL((await decide(i, first.headers.get("location")!)).headers.get("location")!).hash.slice(1));
    expect(fragment.get("access_token")).toBeTruthy();
    expect(fragment.get("id_token")).toBeNull();
  });

  it("comes again on refresh: new iat and at_hash, the same auth_time and nonce; not when the refresh narrows openid away", async () => {
    const s = await setup();
    const first = await tokensFor(s, { scope: "openid profile", nonce: "refresh-nonce" });
    const original = await verifyIdToken(first.id_token!, s.client.client_id);
    advanceClock(90_000);
    const refreshed = await refresh(s, first.refresh_token);
    expect(refreshed.status).toBe(200);
    const again = await verifyIdToken(String(refreshed.json.id_token), s.client.client_id);
    expect(again).toMatchObject({ sub: original.sub, aud: original.aud, auth_time: original.auth_time, nonce: "refresh-nonce", name: "Olivia Openid" });
    expect(again.at_hash).toBe(atHash(String(refreshed.json.access_token)));
    expect(again.at_hash).not.toBe(original.at_hash);
    expect(again.iat! - original.iat!).toBeGreaterThanOrEqual(90);

    const narrowed = await refresh(s, String(refreshed.json.refresh_token), "profile");
    expect(narrowed.status).toBe(200);
    expect(narrowed.json.scope).toBe("profile");
    expect(narrowed.json.id_token).toBeUndefined();
  });

  it("answers an unknown scope with invalid_scope on the redirect", async () => {
    const s = await setup();
    const res = await authorize(s, { scope: "openid address" });
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_scope");
  });
});

describe("UserInfo", () => {
  it("answers GET and POST with the claims of the token's scopes", async () => {
    const s = await setup();
    const tokens = await tokensFor(s, { scope: "openid email" });
    for (const method of ["GET", "POST"]) {
      const res = await call(method, USERINFO, { token: tokens.access_token });
      expect(res.status, method).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.json).toEqual({ sub: String(s.user.id), email: s.user.email, email_verified: true });
    }
    const profile = await tokensFor(s, { scope: "openid profile" });
    expect((await call("GET", USERINFO, { token: profile.access_token })).json).toEqual({ sub: String(s.user.id), name: "Olivia Openid" });
  });

  it("is 403 insufficient_scope for a token without openid, 401 without a token or with a bad one", async () => {
    const s = await setup();
    const tokens = await tokensFor(s, { scope: "readonly profile" });
    const noOpenid = await call("GET", USERINFO, { token: tokens.access_token });
    expect(noOpenid.status).toBe(403);
    expect(noOpenid.json).toEqual({ error: "insufficient_scope" });
    expect(noOpenid.headers.get("www-authenticate")).toBe('Bearer realm="api", error="insufficient_scope", scope="openid"');

    const none = await call("GET", USERINFO);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="api", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api", DPoP realm="api", algs="ES256 RS256", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api"');
    const bad = await call("GET", USERINFO, { token: "not-a-token" });
    expect(bad.status).toBe(401);
    expect(bad.json).toEqual({ error: "invalid_token" });
    expect(bad.headers.get("www-authenticate")).toBe('Bearer realm="api", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api", error="invalid_token", DPoP realm="api", algs="ES256 RS256", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api"');
    // A token in the body never authenticates (docs/rules/endpoints.md#api-authentication).
    const inBody = await call("POST", USERINFO, { headers: { "content-type": "application/x-www-form-urlencoded" }, raw: `access_token=${tokens.access_token}` });
    expect(inBody.status).toBe(401);
  });

  it("stops answering once the token is revoked", async () => {
    const s = await setup();
    const tokens = await tokensFor(s, { scope: "openid" });
    expect((await call("DELETE", `/api/oauth2token/${tokens.access_token}/`)).status).toBe(204);
    const res = await call("GET", USERINFO, { token: tokens.access_token });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: "invalid_token" });
  });
});

describe("prompt and max_age", () => {
  const locationOf = (res: { headers: Headers }) => new URL(res.headers.get("location")!, ISS);

  it("prompt=none signed out redirects with login_required, state and iss: never a page", async () => {
    const s = await setup();
    const res = await authorize(s, { prompt: "none" }, null);
    expect(res.status).toBe(302);
    const url = locationOf(res);
    expect(url.origin + url.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(url.searchParams)).toEqual({ error: "login_required", state: "st-oidc", iss: ISS });
  });

  it("prompt=none signed in: consent_required while consent would be asked, then the code at once", async () => {
    const s = await setup();
    const asked = locationOf(await authorize(s, { prompt: "none" }));
    expect(asked.searchParams.get("error")).toBe("consent_required");
    expect(asked.searchParams.get("state")).toBe("st-oidc");
    await codeFor(s); // approves once; consent is remembered for this confidential client
    const silent = await authorize(s, { prompt: "none", nonce: "silent" });
    const url = locationOf(silent);
    expect(url.origin + url.pathname).toBe(REDIRECT);
    expect(url.searchParams.get("code")).toMatch(/^[\w-]{43}$/);
    const tokens = await exchange(s, url.searchParams.get("code")!);
    expect((await verifyIdToken(String(tokens.json.id_token), s.client.client_id)).nonce).toBe("silent");
  });

  it("prompt=none with a max_age the session exceeds is login_required; a public client always needs consent", async () => {
    const s = await setup({ authTime: seconds() - 7200 });
    await codeFor(s, { scope: "openid" });
    expect(locationOf(await authorize(s, { prompt: "none", max_age: "3600" })).searchParams.get("error")).toBe("login_required");
    const p = await setup({ isPublic: true });
    const challenge = { code_challenge: s256(VERIFIER), code_challenge_method: "S256" };
    await codeFor(p, challenge);
    expect(locationOf(await authorize(p, { prompt: "none", ...challenge })).searchParams.get("error")).toBe("consent_required");
  });

  it("prompt=login asks for the password again, then continues the same request once, without looping", async () => {
    const s = await setup();
    await codeFor(s);
    const res = await authorize(s, { prompt: "login", nonce: "n1" });
    const login = locationOf(res);
    expect(login.pathname).toBe("/login");
    expect(login.searchParams.get("prompt")).toBe("login");
    const back = new URL(login.searchParams.get("callbackUrl")!, ISS);
    expect(back.pathname).toBe(AUTH);
    expect(back.searchParams.get("prompt")).toBe("login");
    expect(back.searchParams.get("nonce")).toBe("n1");
    expect(back.searchParams.get("state")).toBe("st-oidc");
    // The time the request was received, signed by the server (a sign-in after it meets prompt=login).
    const authAfter = Number(back.searchParams.get("auth_after")!.split(".")[0]);
    expect(Math.abs(authAfter - seconds())).toBeLessThanOrEqual(5);

    // The old session coming back without signing in is sent to sign in again.
    const stale = await call("GET", back.pathname + back.search, { headers: { cookie: s.cookie } });
    expect(locationOf(stale).pathname).toBe("/login");
    // After a fresh sign-in the request goes on: consent is remembered, so straight to the code.
    advanceClock(2_000);
    const freshAuthTime = seconds();
    const fresh = await call("GET", back.pathname + back.search, { headers: { cookie: await sessionCookie(s.user, 0, freshAuthTime) } });
    const code = locationOf(fresh).searchParams.get("code")!;
    expect(code).toBeTruthy();
    const claims = await verifyIdToken(String((await exchange(s, code)).json.id_token), s.client.client_id);
    expect(claims.auth_time).toBe(freshAuthTime);
    expect(claims.nonce).toBe("n1");
  });

  it("max_age: a session that signed in longer ago must sign in again; a recent one goes straight on", async () => {
    const s = await setup({ authTime: seconds() - 600 });
    await codeFor(s);
    const exceeded = locationOf(await authorize(s, { max_age: "300" }));
    expect(exceeded.pathname).toBe("/login");
    const back = new URL(exceeded.searchParams.get("callbackUrl")!, ISS);
    expect(back.searchParams.get("max_age")).toBe("300");
    expect(locationOf(await authorize(s, { max_age: "900" })).searchParams.get("code")).toBeTruthy();
    // max_age=0 is a fresh sign-in, like prompt=login.
    expect(locationOf(await authorize(s, { max_age: "0" })).pathname).toBe("/login");
  });

  it("prompt=consent shows the consent page even when consent is remembered", async () => {
    const s = await setup();
    await codeFor(s);
    expect(locationOf(await authorize(s)).searchParams.get("code")).toBeTruthy();
    expect(locationOf(await authorize(s, { prompt: "consent" })).pathname).toBe("/consent");
  });

  it("a session from before sign-ins recorded their time signs in again for openid, but not for plain OAuth", async () => {
    const s = await setup({ authTime: null });
    expect(locationOf(await authorize(s, { scope: "openid" })).pathname).toBe("/login");
    expect(locationOf(await authorize(s, { scope: "readonly" })).pathname).toBe("/consent");
  });

  it.each([
    ["an unknown prompt", { prompt: "select_account" }, ""],
    ["prompt=none with another value", { prompt: "none login" }, ""],
    ["a malformed max_age", { max_age: "-1" }, ""],
    ["a repeated nonce", { nonce: "a" }, "&nonce=b"],
  ])("refuses %s with invalid_request on the redirect", async (_name, params, extra) => {
    const s = await setup();
    const url = authorizeUrl(s, params) + extra;
    const res = await call("GET", url, { headers: { cookie: s.cookie } });
    expect(res.status).toBe(302);
    expect(Object.fromEntries(locationOf(res).searchParams)).toEqual({ error: "invalid_request", state: "st-oidc", iss: ISS });
  });
});

describe("signing keys", () => {
  it("stores the private key only as a JWE (dir, A256GCM) naming its row (kid and generation), never as a plain JWK", async () => {
    await ensureSigningKey();
    const rows = await (await db()).signingKey.findMany({ where: { privateJwe: { not: null } } });
    expect(rows.length).toBeGreaterThanOrEqual(1);
    for (const row of rows) {
      const header = decodeProtectedHeader(row.privateJwe!);
      expect(header).toEqual({ alg: "dir", enc: "A256GCM", kid: row.kid, cty: "jwk+json", gen: row.generation });
      expect(row.privateJwe!.split(".")).toHaveLength(5);
      expect(row.privateJwe).not.toMatch(/"d"\s*:/);
      expect(JSON.parse(row.publicJwk)).not.toHaveProperty("d");
    }
  });

  it("rotation: new tokens carry the new kid, tokens signed before still verify for a day, then the old key is gone", async () => {
    const s = await setup();
    const before = await tokensFor(s, { scope: "openid" });
    const oldKid = decodeProtectedHeader(before.id_token!).kid!;

    const rotated = await rotateSigningKey();
    expect(Object.keys(rotated)).toEqual(["kid", "created_at"]);
    expect(rotated.kid).not.toBe(oldKid);
    const oldRow = await (await db()).signingKey.findUniqueOrThrow({ where: { kid: oldKid } });
    expect(oldRow.privateJwe).toBeNull();
    expect(oldRow.retiredAt).not.toBeNull();

    const after = await tokensFor(s, { scope: "openid" });
    expect(decodeProtectedHeader(after.id_token!).kid).toBe(rotated.kid);
    expect((await jwks()).keys.map((key) => key.kid)).toEqual(expect.arrayContaining([rotated.kid, oldKid]));
    // The token signed with the retired key still verifies against the published set.
    expect((await verifyIdToken(before.id_token!, s.client.client_id)).sub).toBe(String(s.user.id));

    advanceClock(24 * 3600 * 1000 + 60_000);
    const later = (await jwks()).keys.map((key) => key.kid);
    expect(later).toContain(rotated.kid);
    expect(later).not.toContain(oldKid);
    const set = createLocalJWKSet(await jwks());
    await expect(compactVerify(before.id_token!, set)).rejects.toThrow();
  });

  it("records signing_key.rotated in the audit log", async () => {
    const { kid } = await rotateSigningKey();
    const events = await (await db()).auditEvent.findMany({ where: { type: "signing_key.rotated" } });
    expect(events.map((event) => JSON.parse(event.detail!).kid)).toContain(kid);
  });

  it("two rotations at once both succeed, one after the other, and only the newest key can sign", async () => {
    const results = await Promise.all([rotateSigningKey(), rotateSigningKey(), rotateSigningKey()]);
    expect(new Set(results.map((result) => result.kid)).size).toBe(3);
    const signing = await (await db()).signingKey.findMany({ where: { privateJwe: { not: null } } });
    expect(signing).toHaveLength(1);
    expect(results.map((result) => result.kid)).toContain(signing[0]!.kid);
  });

  it("a revocation of the signing key started together with two rotations: all succeed, one key signs, the revoked kid is gone", async () => {
    const { kid } = await rotateSigningKey();
    const [revoked, ...rotations] = await Promise.all([revokeSigningKey(kid), rotateSigningKey(), rotateSigningKey()]);
    expect(revoked).toMatchObject({ kid });
    expect(await (await db()).signingKey.findUnique({ where: { kid } })).toBeNull();
    const signing = await (await db()).signingKey.findMany({ where: { privateJwe: { not: null } } });
    expect(signing).toHaveLength(1);
    expect([...rotations.map((rotation) => rotation.kid), revoked.rotated_to?.kid]).toContain(signing[0]!.kid);
    await expect(revokeSigningKey(kid)).rejects.toMatchObject({ status: 404 });
  });

  it("instances racing to make the first key end up with one key", async () => {
    await write((tx) => tx.signingKey.deleteMany());
    forgetLoadedSigningKey();
    await Promise.all(Array.from({ length: 4 }, () => ensureSigningKey()));
    const rows = await (await db()).signingKey.findMany();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ generation: 1, retiredAt: null });
    // And it signs: the next id_token verifies against a JWKS holding just that key.
    const s = await setup();
    const tokens = await tokensFor(s, { scope: "openid" });
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBe(rows[0]!.kid);
    expect((await verifyIdToken(tokens.id_token!, s.client.client_id)).sub).toBe(String(s.user.id));
  });

  it("npm run cli -- keys:rotate --json prints {kid, created_at}, and the JWKS publishes that kid", async () => {
    const run = await runCli("keys:rotate", "--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { kid: string; created_at: string };
    expect(Object.keys(out)).toEqual(["kid", "created_at"]);
    expect(out.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect((await jwks()).keys[0]!.kid).toBe(out.kid);
  });
});

// Signing keys seen by every instance at once (docs/rules/openid-connect.md#signing-keys): another server
// process on the same database signs its very next id_token with the key `keys:rotate` made, a key withdrawn
// with `keys:revoke` leaves every instance's JWKS on its next request (and what it signed stops verifying),
// and a private key's ciphertext decrypts only in its own row.
describe("signing keys across instances: rotation and revocation at once", () => {
  const instances = startedInstances(2);

  /** A refresh at `instance`: its id_token (OpenID Connect Core 12.2), keeping the newest refresh token. */
  async function idTokenAt(instance: Instance, s: Setup, held: { refreshToken: string }): Promise<string> {
    const response = await fetch(`${instance.url}${TOKEN}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: held.refreshToken, client_id: s.client.client_id, client_secret: s.client.client_secret! }),
    });
    const body = (await response.json()) as Record<string, string>;
    expect(response.status, JSON.stringify(body)).toBe(200);
    held.refreshToken = body.refresh_token ?? held.refreshToken;
    expect(body.id_token).toBeTruthy();
    return body.id_token!;
  }

  async function jwksAt(instance: Instance) {
    const response = await fetch(`${instance.url}/api/connect/oauth2/jwks/`);
    expect(response.status).toBe(200);
    return { set: (await response.json()) as JSONWebKeySet, cacheControl: response.headers.get("cache-control") };
  }

  const kidOf = (idToken: string) => decodeProtectedHeader(idToken).kid!;
  const verifiesAt = async (instance: Instance, idToken: string, audience: string) =>
    jwtVerify(idToken, createLocalJWKSet((await jwksAt(instance)).set), { issuer: ISS, audience, algorithms: ["RS256"] }).then(
      () => true,
      () => false,
    );

  async function openidSession() {
    const s = await setup();
    const tokens = await tokensFor(s, { scope: "openid" });
    return { s, held: { refreshToken: tokens.refresh_token } };
  }

  it("keys:rotate (the CLI, another process): the very next id_token from B, and from A, carries the new kid", async () => {
    const [a, b] = instances as [Instance, Instance];
    const { s, held } = await openidSession();
    const before = kidOf(await idTokenAt(b, s, held));
    expect(kidOf(await idTokenAt(a, s, held))).toBe(before); // both instances have loaded the key

    const run = await runCli("keys:rotate", "--json");
    expect(run.code, run.stderr).toBe(0);
    const { kid } = JSON.parse(run.stdout) as { kid: string };
    expect(kid).not.toBe(before);

    expect(kidOf(await idTokenAt(b, s, held))).toBe(kid);
    expect(kidOf(await idTokenAt(a, s, held))).toBe(kid);
  }, 60_000);

  it("keys:revoke --kid K (a retired key): gone from both instances' JWKS on their next request, and what it signed no longer verifies", async () => {
    const [a, b] = instances as [Instance, Instance];
    const { s, held } = await openidSession();
    const signed = await idTokenAt(b, s, held);
    const leaked = kidOf(signed);
    await rotateSigningKey(); // the leaked key is now retired, still published for a day
    for (const instance of [a, b]) {
      expect((await jwksAt(instance)).set.keys.map((key) => key.kid)).toContain(leaked);
      expect(await verifiesAt(instance, signed, s.client.client_id)).toBe(true);
    }

    const run = await runCli("keys:revoke", "--kid", leaked, "--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out).toEqual({ kid: leaked, revoked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), rotated_to: null });

    for (const instance of [a, b]) {
      const { set, cacheControl } = await jwksAt(instance);
      expect(set.keys.map((key) => key.kid)).not.toContain(leaked);
      expect(set.keys.length).toBeGreaterThanOrEqual(1);
      expect(cacheControl).toBe("no-store"); // no cache may keep serving a withdrawn key
      expect(await verifiesAt(instance, signed, s.client.client_id)).toBe(false);
    }
    expect(await (await db()).auditEvent.count({ where: { type: "signing_key.revoked", detail: { contains: leaked } } })).toBe(1);
  }, 60_000);

  it("keys:revoke of the signing key rotates first: the next id_token from B and A carries the new kid and verifies; the old one does not", async () => {
    const [a, b] = instances as [Instance, Instance];
    const { s, held } = await openidSession();
    const signed = await idTokenAt(b, s, held);
    const leaked = kidOf(signed);
    expect(kidOf(await idTokenAt(a, s, held))).toBe(leaked);

    const run = await runCli("keys:revoke", "--kid", leaked, "--json");
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { kid: string; rotated_to: { kid: string; created_at: string } | null };
    expect(out.kid).toBe(leaked);
    expect(out.rotated_to).toEqual({ kid: expect.any(String), created_at: expect.any(String) });
    const next = out.rotated_to!.kid;
    expect(next).not.toBe(leaked);

    for (const instance of [b, a]) {
      const idToken = await idTokenAt(instance, s, held);
      expect(kidOf(idToken)).toBe(next);
      expect(await verifiesAt(instance, idToken, s.client.client_id)).toBe(true);
      expect((await jwksAt(instance)).set.keys.map((key) => key.kid)).not.toContain(leaked);
      expect(await verifiesAt(instance, signed, s.client.client_id)).toBe(false);
    }
    expect(await (await db()).signingKey.findUnique({ where: { kid: leaked } })).toBeNull();
  }, 60_000);

  it("an instance whose AUTH_SECRET decrypts no key: logs it at start and answers a request that needs an id_token with a 500 that spends nothing", async () => {
    const [a] = instances as [Instance];
    const { s, held } = await openidSession();
    const signing = kidOf(await idTokenAt(a, s, held));
    const other = await startInstance({ env: { AUTH_SECRET: "another-secret-another-secret-0123456789", LOG_LEVEL: "error" }, instrumentation: true });
    try {
      await other.printed(/the id_token signing key cannot be used/);
      const response = await fetch(`${other.url}${TOKEN}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: held.refreshToken, client_id: s.client.client_id, client_secret: s.client.client_secret! }),
      });
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ error: "server_error" });
      const logged = other
        .output()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logged).toContainEqual(expect.objectContaining({ level: "error", message: "a signing key does not load and is skipped", kid: signing }));
      // The refresh token was not spent: an instance that holds the right secret takes it.
      expect(kidOf(await idTokenAt(a, s, held))).toBe(signing);
    } finally {
      await other.stop();
    }
  }, 60_000);

  it("keys:revoke of an unknown kid: exit 1 and one line naming the problem; without --kid: exit 2 with the usage", async () => {
    const unknown = await runCli("keys:revoke", "--kid", "no-such-kid", "--json");
    expect(unknown).toEqual({ code: 1, stdout: "", stderr: "error: kid: no such signing key (never made, or already revoked)\n" });
    const missing = await runCli("keys:revoke", "--json");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: --kid is required\n\nUsage: npm run -s cli -- keys:revoke --kid K/);
  }, 60_000);
});

describe("a private key's ciphertext is bound to its row", () => {
  const encryptionKey = () => new Uint8Array(hkdfSync("sha256", process.env.AUTH_SECRET!, "", "oidc-signing-key-encryption", 32));

  /** The current signing row, freshly made (so that it is in this version's format). */
  async function freshSigningRow() {
    const { kid } = await rotateSigningKey();
    return (await db()).signingKey.findUniqueOrThrow({ where: { kid } });
  }

  async function newestGeneration() {
    return (await (await db()).signingKey.findFirstOrThrow({ orderBy: { generation: "desc" } })).generation;
  }

  /** An id_token from the code flow while a forged row is the newest, and the error lines naming `forgedKid`. */
  async function signedWhileForged(forgedKid: string) {
    const s = await setup();
    forgetLoadedSigningKey(); // as a process that starts now
    const saved = setEnvForTests({ logLevel: "warn" });
    try {
      const { result, lines } = await captureLog(() => tokensFor(s, { scope: "openid" }));
      return { s, idToken: result.id_token!, lines: lines.filter((line) => line.level === "error" && line.kid === forgedKid) };
    } finally {
      setEnvForTests(saved);
    }
  }

  it("copied into a new row under another kid: that row's key does not load, it is skipped with an error naming it, and the key of its own row signs", async () => {
    const source = await freshSigningRow();
    const { publicKey } = await generateKeyPair("RS256", { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    await write((tx) =>
      tx.signingKey.create({ data: { kid, generation: source.generation + 1000, alg: "RS256", publicJwk: JSON.stringify(publicJwk), privateJwe: source.privateJwe } }),
    );
    try {
      const { s, idToken, lines } = await signedWhileForged(kid);
      expect(decodeProtectedHeader(idToken).kid).toBe(source.kid);
      expect((await verifyIdToken(idToken, s.client.client_id)).sub).toBe(String(s.user.id));
      expect(lines).toEqual([expect.objectContaining({ message: "a signing key does not load and is skipped", generation: source.generation + 1000 })]);
    } finally {
      await write((tx) => tx.signingKey.deleteMany({ where: { kid } }));
    }
  });

  it("a retired key's ciphertext (from a backup) copied into a new row that takes over its kid: it does not sign again; the current key does", async () => {
    const retired = await freshSigningRow(); // its ciphertext, as a backup would hold it
    const current = await freshSigningRow(); // the retired key's private part is erased now
    expect((await (await db()).signingKey.findUniqueOrThrow({ where: { id: retired.id } })).privateJwe).toBeNull();
    const moved = `moved-${retired.kid}`;
    const generation = (await newestGeneration()) + 1000;
    // The retired row steps aside under another kid; a new row (another generation) claims its kid, its
    // public key and its old ciphertext, and so becomes the newest row holding a private key.
    await write(async (tx) => {
      await tx.signingKey.update({ where: { id: retired.id }, data: { kid: moved } });
      await tx.signingKey.create({ data: { kid: retired.kid, generation, alg: "RS256", publicJwk: retired.publicJwk, privateJwe: retired.privateJwe } });
    });
    try {
      const { s, idToken, lines } = await signedWhileForged(retired.kid);
      expect(decodeProtectedHeader(idToken).kid, "the retired key signed again").not.toBe(retired.kid);
      expect(decodeProtectedHeader(idToken).kid).toBe(current.kid);
      expect((await verifyIdToken(idToken, s.client.client_id)).sub).toBe(String(s.user.id));
      expect(lines).toEqual([expect.objectContaining({ message: "a signing key does not load and is skipped", generation })]);
    } finally {
      await write(async (tx) => {
        await tx.signingKey.deleteMany({ where: { generation } });
        await tx.signingKey.updateMany({ where: { id: retired.id }, data: { kid: retired.kid } });
      });
    }
  });

  // Each of the two checks on a loaded key alone, the other passing: a ciphertext that names another kid
  // (AES-GCM authenticates the header that names it) though it holds the row's own key; and one that names the
  // row (its kid and generation) but holds another key. Both are made here with the encryption key itself.
  it.each([
    ["names another kid, though it holds the row's own key", "other-kid", "own"],
    ["names the row's kid and generation but holds another key", "row-kid", "other"],
  ] as const)("a ciphertext that %s does not load: the key of its own row signs", async (_name, names, holds) => {
    const current = await freshSigningRow();
    const own = await generateKeyPair("RS256", { extractable: true });
    const other = await generateKeyPair("RS256", { extractable: true });
    const publicJwk = await exportJWK(own.publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const generation = (await newestGeneration()) + 1000;
    const forged = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(await exportJWK((holds === "own" ? own : other).privateKey))))
      .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid: names === "row-kid" ? kid : `not-${kid}`, cty: "jwk+json", gen: generation })
      .encrypt(encryptionKey());
    await write((tx) => tx.signingKey.create({ data: { kid, generation, alg: "RS256", publicJwk: JSON.stringify(publicJwk), privateJwe: forged } }));
    try {
      const { s, idToken, lines } = await signedWhileForged(kid);
      expect(decodeProtectedHeader(idToken).kid).toBe(current.kid);
      expect((await verifyIdToken(idToken, s.client.client_id)).sub).toBe(String(s.user.id));
      expect(lines).toEqual([expect.objectContaining({ message: "a signing key does not load and is skipped", generation })]);
    } finally {
      await write((tx) => tx.signingKey.deleteMany({ where: { generation } }));
    }
  });

  it("a row in the previous format (a JWE naming only its kid) still signs, and is re-encrypted bound to its row on first use", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const legacy = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(await exportJWK(privateKey))))
      .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid, cty: "jwk+json" })
      .encrypt(encryptionKey());
    const generation = (await newestGeneration()) + 1;
    await write((tx) => tx.signingKey.create({ data: { kid, generation, alg: "RS256", publicJwk: JSON.stringify(publicJwk), privateJwe: legacy } }));
    try {
      const s = await setup();
      forgetLoadedSigningKey(); // as a process that starts now
      const tokens = await tokensFor(s, { scope: "openid" });
      expect(decodeProtectedHeader(tokens.id_token!).kid).toBe(kid);
      expect((await verifyIdToken(tokens.id_token!, s.client.client_id)).sub).toBe(String(s.user.id));
      const row = await (await db()).signingKey.findUniqueOrThrow({ where: { kid } });
      expect(row.privateJwe).not.toBe(legacy);
      expect(decodeProtectedHeader(row.privateJwe!)).toEqual({ alg: "dir", enc: "A256GCM", kid, cty: "jwk+json", gen: generation });
    } finally {
      await rotateSigningKey(); // a key of this version signs again
    }
  });
});

// Logout (docs/rules/openid-connect.md#logout, docs/rules/openid-connect.md#back-channel-logout): here because
// every id_token_hint and logout token is verified against the JWKS, which tests above rotate and delete.
describe("logout", () => {
  const LOGOUT = "/api/connect/oauth2/logout/";
  const CONFIRM = "/api/connect/oauth2/logout/confirm/";
  const SIGNED_OUT = "https://client.example.test/signed-out";
  const FORM = { "content-type": "application/x-www-form-urlencoded" };

  /** A local receiver of logout tokens that answers with the statuses it is given, then 200. */
  async function startReceiver(statuses: number[] = []) {
    const received: { contentType: string | undefined; logoutToken: string | null }[] = [];
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        received.push({ contentType: request.headers["content-type"], logoutToken: new URLSearchParams(body).get("logout_token") });
        response.writeHead(statuses.shift() ?? 200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return { uri: `http://127.0.0.1:${port}/backchannel`, received, server, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  /** A person signed in to one browser session (sid known), and a code client registered for logout. */
  async function signedIn(options: { backchannelLogoutUri?: string; sid?: string } = {}) {
    const s = await setup();
    const sid = options.sid ?? `sid-${randomBytes(8).toString("hex")}`;
    const client = await makeClient({
      ownerId: s.owner.id,
      grantType: "authorization_code",
      postLogoutRedirectUris: [SIGNED_OUT],
      backchannelLogoutUri: options.backchannelLogoutUri ?? null,
    });
    return { ...s, client, sid, cookie: await sessionCookie(s.user, 0, s.authTime, sid) };
  }

  const logout = (params: Record<string, string>, cookie?: string) => call("GET", `${LOGOUT}?${new URLSearchParams(params)}`, { headers: cookie ? { cookie } : {} });
  const sessionCleared = (res: { headers: Headers }) => res.headers.getSetCookie().some((line) => /^next-auth\.session-token=;.*Max-Age=0/.test(line));

  it("discovery names the end_session_endpoint and back-channel logout with sid", async () => {
    const oidc = await call("GET", "/.well-known/openid-configuration");
    expect(oidc.json).toMatchObject({ end_session_endpoint: `${ISS}/api/connect/oauth2/logout/`, backchannel_logout_supported: true, backchannel_logout_session_supported: true });
  });

  it("id_tokens carry the browser session's sid, on refresh too", async () => {
    const s = await signedIn();
    const tokens = await tokensFor(s, { scope: "openid" });
    expect((await verifyIdToken(tokens.id_token!, s.client.client_id)).sid).toBe(s.sid);
    const refreshed = await refresh(s, tokens.refresh_token);
    expect((await verifyIdToken(String(refreshed.json.id_token), s.client.client_id)).sid).toBe(s.sid);
  });

  it("a hint naming the signed-in person signs out at once: cookie cleared, back to the registered address with state (GET 302, POST 303)", async () => {
    for (const method of ["GET", "POST"] as const) {
      const s = await signedIn();
      const { id_token } = await tokensFor(s, { scope: "openid" });
      const params = { id_token_hint: id_token!, post_logout_redirect_uri: SIGNED_OUT, state: "st-logout" };
      const res =
        method === "GET" ? await logout(params, s.cookie) : await call("POST", LOGOUT, { headers: { ...FORM, cookie: s.cookie }, raw: new URLSearchParams(params).toString() });
      expect(res.status).toBe(method === "GET" ? 302 : 303);
      expect(res.headers.get("location")).toBe(`${SIGNED_OUT}?state=st-logout`);
      expect(sessionCleared(res)).toBe(true);
      expect(await (await db()).sessionClient.findMany({ where: { sid: s.sid }, select: { endedAt: true } })).toEqual([{ endedAt: expect.any(Date) }]);
    }
  });

  it("an expired hint is accepted; without post_logout_redirect_uri the browser lands on the signed-out page and state is dropped", async () => {
    const s = await signedIn();
    const { id_token } = await tokensFor(s, { scope: "openid" });
    advanceClock(3 * 3600 * 1000);
    const res = await logout({ id_token_hint: id_token!, state: "dropped" }, s.cookie);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/logout/done");
    expect(sessionCleared(res)).toBe(true);
  });

  it("nobody signed in: straight to the registered address, nothing to clear", async () => {
    const s = await signedIn();
    const res = await logout({ client_id: s.client.client_id, post_logout_redirect_uri: SIGNED_OUT, state: "x" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`${SIGNED_OUT}?state=x`);
    expect((await logout({})).headers.get("location")).toBe("/logout/done");
  });

  it("an invalid hint, an unknown client, a client_id that is not the hint's audience, an unregistered or client-less address, a repeated parameter: an error page, never a redirect", async () => {
    const s = await signedIn();
    const other = await signedIn();
    const { id_token } = await tokensFor(s, { scope: "openid" });
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT({}).setProtectedHeader({ alg: "RS256", kid: decodeProtectedHeader(id_token!).kid!, typ: "JWT" }).setIssuer(ISS).setSubject(String(s.user.id)).setAudience(s.client.client_id).sign(privateKey);
    const cases: [string, string][] = [
      [`id_token_hint=not-a-token`, "invalid_request"],
      [`id_token_hint=${forged}`, "invalid_request"],
      [`id_token_hint=${id_token}&client_id=${other.client.client_id}`, "invalid_request"],
      [`client_id=unknown-client&post_logout_redirect_uri=${encodeURIComponent(SIGNED_OUT)}`, "invalid_client"],
      [`client_id=${s.client.client_id}&post_logout_redirect_uri=${encodeURIComponent("https://evil.example.test/")}`, "invalid_request"],
      [`client_id=${s.client.client_id}&post_logout_redirect_uri=${encodeURIComponent(SIGNED_OUT + "/")}`, "invalid_request"],
      [`post_logout_redirect_uri=${encodeURIComponent(SIGNED_OUT)}`, "invalid_request"],
      [`client_id=${s.client.client_id}&client_id=${s.client.client_id}`, "invalid_request"],
    ];
    for (const [query, error] of cases) {
      const res = await call("GET", `${LOGOUT}?${query}`, { headers: { cookie: s.cookie } });
      expect.soft(res.status, query).toBe(400);
      expect.soft(res.headers.get("location"), query).toBeNull();
      expect.soft(res.headers.get("content-type"), query).toMatch(/^text\/html/);
      expect.soft(res.text, query).toContain(error);
      expect.soft(sessionCleared(res), query).toBe(false);
    }
    expect(await (await db()).sessionClient.count({ where: { sid: s.sid, endedAt: { not: null } } })).toBe(0);
  });

  it("signed in without a hint naming them: the confirmation page first; its form signs out, with CSRF and Origin checked; Stay signed in changes nothing", async () => {
    const s = await signedIn();
    const someoneElse = await signedIn();
    const { id_token } = await tokensFor(someoneElse, { scope: "openid" });
    for (const params of [{ client_id: s.client.client_id, post_logout_redirect_uri: SIGNED_OUT, state: "st" }, { id_token_hint: id_token! }] as Record<string, string>[]) {
      const res = await logout(params, s.cookie);
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toMatch(/^\/logout\?request=/);
      expect(sessionCleared(res)).toBe(false);
    }
    const first = await logout({ client_id: s.client.client_id, post_logout_redirect_uri: SIGNED_OUT, state: "st" }, s.cookie);
    const sealed = new URL(first.headers.get("location")!, ISS).searchParams.get("request")!;
    const user = { id: s.user.id, sid: s.sid };
    const confirm = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      call("POST", CONFIRM, { headers: { ...FORM, origin: ISS, cookie: s.cookie, ...headers }, raw: new URLSearchParams(form).toString() });

    const wrongToken = await confirm({ request: sealed, csrf: logoutCsrfToken(sealed, { id: s.user.id, sid: "another-session" }), decision: "sign_out" });
    expect(wrongToken.status).toBe(403);
    const wrongOrigin = await confirm({ request: sealed, csrf: logoutCsrfToken(sealed, user), decision: "sign_out" }, { origin: "https://evil.example.test" });
    expect(wrongOrigin.status).toBe(403);
    const stay = await confirm({ request: sealed, csrf: logoutCsrfToken(sealed, user), decision: "stay" });
    expect(stay.status).toBe(303);
    expect(stay.headers.get("location")).toBe("/");
    expect(sessionCleared(stay)).toBe(false);
    for (const res of [wrongToken, wrongOrigin]) expect(sessionCleared(res)).toBe(false);

    const signedOut = await confirm({ request: sealed, csrf: logoutCsrfToken(sealed, user), decision: "sign_out" });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get("location")).toBe(`${SIGNED_OUT}?state=st`);
    expect(sessionCleared(signedOut)).toBe(true);
  });

  it("the logout token: POSTed as a form to the registered address, retried after a 500 until it arrives, verified with every claim", async () => {
    const receiver = await startReceiver([500]);
    try {
      const s = await signedIn({ backchannelLogoutUri: receiver.uri });
      const tokens = await tokensFor(s, { scope: "openid", nonce: "n-0S6_WzA2Mj" });
      const res = await logout({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT }, s.cookie);
      expect(res.status).toBe(302);
      // The first delivery ran right after the response and got the 500: retried later.
      expect(receiver.received).toHaveLength(1);
      const row = await (await db()).logoutDelivery.findFirstOrThrow({ where: { sid: s.sid } });
      expect(row).toMatchObject({ status: "pending", attempts: 1, lastError: expect.stringContaining("500") });
      expect(await deliverLogoutsDue({ ids: [row.id] })).toMatchObject({ sent: 0 }); // not due yet
      advanceClock(31_000);
      expect(await deliverLogoutsDue({ ids: [row.id] })).toMatchObject({ sent: 1 });
      expect(receiver.received).toHaveLength(2);
      expect(await (await db()).logoutDelivery.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({ status: "sent", attempts: 2 });
      expect(await deliverLogoutsDue({ ids: [row.id] })).toMatchObject({ sent: 0 }); // never twice

      const [first, second] = receiver.received as [{ contentType: string; logoutToken: string }, { contentType: string; logoutToken: string }];
      expect(second.contentType).toBe("application/x-www-form-urlencoded");
      const { payload, protectedHeader } = await jwtVerify(second.logoutToken, createLocalJWKSet(await jwks()), {
        issuer: ISS,
        audience: s.client.client_id,
        algorithms: ["RS256"],
        typ: "logout+jwt",
        currentDate: new Date(nowMs()),
      });
      expect(protectedHeader.kid).toBeTruthy();
      expect(payload).toEqual({
        iss: ISS,
        aud: s.client.client_id,
        iat: expect.any(Number),
        exp: (payload.iat as number) + 120,
        jti: row.jti,
        sub: String(s.user.id),
        sid: s.sid,
        events: { "http://schemas.openid.net/event/backchannel-logout": {} },
      });
      expect(payload).not.toHaveProperty("nonce");
      expect(decodeJwt(first.logoutToken).jti).toBe(row.jti);
    } finally {
      await receiver.close();
    }
  });

  it("a logout token is never sent to a loopback or private address unless BACKCHANNEL_LOGOUT_PRIVATE_ADDRESSES is on: refused before connecting", async () => {
    const receiver = await startReceiver();
    let connections = 0;
    receiver.server.on("connection", () => connections++);
    const saved = setEnvForTests({ backchannelLogoutPrivateAddresses: false });
    try {
      const s = await signedIn({ backchannelLogoutUri: receiver.uri });
      const tokens = await tokensFor(s, { scope: "openid" });
      expect((await logout({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT }, s.cookie)).status).toBe(302);
      const row = await (await db()).logoutDelivery.findFirstOrThrow({ where: { sid: s.sid } });
      // The first attempt ran right after the response, as in the test above, and connected to nothing.
      expect(await (await db()).logoutDelivery.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({
        status: "pending",
        attempts: 1,
        lastError: expect.stringContaining("resolves to a non-public address (127.0.0.1)"),
      });
      expect(connections).toBe(0);
      expect(receiver.received).toHaveLength(0);

      // Allowed (the default outside production): the same token arrives.
      setEnvForTests({ backchannelLogoutPrivateAddresses: true });
      advanceClock(31_000);
      expect(await deliverLogoutsDue({ ids: [row.id] })).toMatchObject({ sent: 1 });
      expect(receiver.received).toHaveLength(1);
    } finally {
      setEnvForTests(saved);
      await receiver.close();
    }
  });

  it("sign-outs of one session racing each other send one logout token per client", async () => {
    const receiver = await startReceiver();
    try {
      const s = await signedIn({ backchannelLogoutUri: receiver.uri });
      const second = await makeClient({ ownerId: s.owner.id, grantType: "authorization_code", backchannelLogoutUri: receiver.uri });
      const { id_token } = await tokensFor(s, { scope: "openid" });
      await tokensFor({ ...s, client: second }, { scope: "openid" });
      const barrier = new Barrier(6);
      const form = new URLSearchParams({ id_token_hint: id_token! }).toString();
      const answers = await together(barrier, Array.from({ length: 6 }, () => call("POST", LOGOUT, { headers: { ...FORM, cookie: s.cookie }, raw: form, heldBy: barrier })));
      expect(barrier.arrived).toBe(6);
      for (const answer of answers) expect(answer.status).toBe(303);
      const rows = await (await db()).logoutDelivery.findMany({ where: { sid: s.sid }, select: { clientId: true } });
      expect(rows).toHaveLength(2);
      expect(new Set(rows.map((row) => row.clientId)).size).toBe(2);
      await deliverLogoutsDue();
      expect(receiver.received.filter((r) => decodeJwt(r.logoutToken!).sid === s.sid)).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it("sign out everywhere and a password reset send a logout token for every session of the person", async () => {
    const receiver = await startReceiver();
    try {
      for (const end of ["everywhere", "reset"] as const) {
        const s = await signedIn({ backchannelLogoutUri: receiver.uri });
        const otherSid = `sid-${randomBytes(8).toString("hex")}`;
        await tokensFor(s, { scope: "openid" });
        await tokensFor({ ...s, cookie: await sessionCookie(s.user, 0, s.authTime, otherSid) }, { scope: "openid" });
        if (end === "everywhere") {
          await signOutEverywhere(s.user.id);
        } else {
          const token = randomBytes(32).toString("base64url");
          await write((tx) => issueAccountToken(tx, { token, userId: s.user.id, purpose: "reset_password", email: s.user.email, ttlMs: 3600_000 }));
          expect(await takeAccountStep(token, { purpose: "reset_password", passwordHash: "not-a-real-hash" })).toMatchObject({ state: "done" });
        }
        expect(await (await db()).logoutDelivery.count({ where: { sid: { in: [s.sid, otherSid] } } })).toBe(2);
        await deliverLogoutsDue();
        // A delivery that started right after the sign-out (src/logout/deliver-soon.ts) may still be on its way.
        const sids = () => receiver.received.map((r) => decodeJwt(r.logoutToken!)).filter((claims) => claims.sub === String(s.user.id)).map((claims) => claims.sid);
        await until(() => sids().length >= 2, () => `logout tokens of ${end}: ${sids().length} of 2`);
        expect(sids().sort(), end).toEqual([s.sid, otherSid].sort());
      }
    } finally {
      await receiver.close();
    }
  });

  it("signing out of the browser (next-auth's sign-out) sends the session's logout token, once", async () => {
    const receiver = await startReceiver();
    try {
      const s = await signedIn({ backchannelLogoutUri: receiver.uri });
      await tokensFor(s, { scope: "openid" });
      const signOut = authOptions().events!.signOut!;
      await signOut({ token: { sid: s.sid, uid: s.user.id }, session: undefined as never });
      await signOut({ token: { sid: s.sid, uid: s.user.id }, session: undefined as never }); // twice: still one
      expect(await (await db()).logoutDelivery.count({ where: { sid: s.sid } })).toBe(1);
      await deliverLogoutsDue();
      await until(
        () => receiver.received.some((r) => decodeJwt(r.logoutToken!).sid === s.sid),
        () => "the logout token of the signed-out session",
      );
      expect(receiver.received.filter((r) => decodeJwt(r.logoutToken!).sid === s.sid)).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it("a receiver that redirects is not followed: the attempt fails and is retried", async () => {
    const target = await startReceiver();
    const redirecting = createServer((_request, response) => response.writeHead(302, { location: target.uri }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    try {
      const s = await signedIn({ backchannelLogoutUri: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/bc` });
      const { id_token } = await tokensFor(s, { scope: "openid" });
      await logout({ id_token_hint: id_token! }, s.cookie);
      expect(await (await db()).logoutDelivery.findFirstOrThrow({ where: { sid: s.sid } })).toMatchObject({ status: "pending", lastError: expect.stringContaining("302") });
      expect(target.received).toHaveLength(0);
    } finally {
      await target.close();
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
    }
  });
});
