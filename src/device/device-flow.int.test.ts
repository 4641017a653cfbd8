// The device authorization grant (RFC 8628, docs/rules/tokens.md#device-flow) against the real route handlers
// and database: the device authorization endpoint, the /device form's post (normalised codes, CSRF, Origin,
// the per-user limit on wrong codes), the consent page's decision, and every answer of the token endpoint
// while polling, including concurrent polls of an approved code.
import { createHash } from "node:crypto";
import { decodeJwt } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { loadConsentScreen } from "@/consent/consent-screen";
import { db, write } from "@/db/client";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { Barrier, together } from "@/testing/race";
import { sessionCookie } from "@/testing/session";
import { deviceFormCsrfToken } from "@/device/verify-user-code";

const DEVICE = "/api/connect/oauth2/device/";
const TOKEN = "/api/connect/oauth2/token/";
const GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const ISS = "http://localhost:3000";
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

afterEach(() => resetClock());

type Registered = Awaited<ReturnType<typeof makeClient>>;

async function setup(options: { isPublic?: boolean } = {}) {
  const owner = await makeUser({ name: "Device Maker" });
  const user = await makeUser({ name: "Dora Device" });
  const client = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: options.isPublic ?? true });
  return { owner, user, client, cookie: await sessionCookie(user) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

const credentials = (client: Registered) => ({ client_id: client.client_id, ...(client.client_secret ? { client_secret: client.client_secret } : {}) });

async function start(client: Registered, scope: string | null = "readonly") {
  const res = await call("POST", DEVICE, { body: { ...credentials(client), ...(scope ? { scope } : {}) } });
  expect(res.status).toBe(200);
  return res.json as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };
}

const poll = (client: Registered, deviceCode: string) => call("POST", TOKEN, { body: { grant_type: GRANT, device_code: deviceCode, ...credentials(client) } });

/** Posts the /device form as the signed-in person's browser would. */
function typeCode(s: Setup, userCode: string, options: { cookie?: string; origin?: string; csrf?: string } = {}) {
  const form = new URLSearchParams({ user_code: userCode, csrf: options.csrf ?? deviceFormCsrfToken(s.user.id) });
  return call("POST", "/device/verify", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: options.origin ?? ISS, cookie: options.cookie ?? s.cookie },
    raw: form.toString(),
  });
}

async function decide(s: Setup, consentLocation: string, decision: "approve" | "deny") {
  const sealed = new URL(consentLocation, ISS).searchParams.get("request")!;
  const form = new URLSearchParams({ request: sealed, csrf: consentCsrfToken(s.user.id, sealed), decision });
  return call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie: s.cookie }, raw: form.toString() });
}

async function approve(s: Setup, userCode: string, decision: "approve" | "deny" = "approve") {
  const typed = await typeCode(s, userCode);
  expect(typed.status).toBe(303);
  expect(typed.headers.get("location")).toMatch(/^\/consent\?request=/);
  return decide(s, typed.headers.get("location")!, decision);
}

describe("device authorization endpoint (RFC 8628 3.1, 3.2)", () => {
  it("answers device_code, user_code as XXXX-XXXX, the verification URIs, expires_in 600 and interval 5; stores only the device code's digest", async () => {
    const s = await setup();
    const res = await call("POST", DEVICE, { body: { client_id: s.client.client_id, scope: "readonly openid" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = res.json as Record<string, string | number>;
    expect(Object.keys(body).sort()).toEqual(["device_code", "expires_in", "interval", "user_code", "verification_uri", "verification_uri_complete"]);
    expect(body.user_code).toMatch(USER_CODE);
    expect(body).toMatchObject({ verification_uri: `${ISS}/device`, verification_uri_complete: `${ISS}/device?user_code=${body.user_code}`, expires_in: 600, interval: 5 });
    expect(String(body.device_code).length).toBeGreaterThanOrEqual(43);
    const row = await (await db()).deviceAuthorization.findUniqueOrThrow({ where: { userCode: String(body.user_code).replace("-", "") } });
    expect(row.deviceCodeDigest).toBe(createHash("sha256").update(String(body.device_code)).digest("hex"));
    expect(JSON.stringify(row)).not.toContain(String(body.device_code));
    expect(row.scopes).toBe("readonly openid");
  });

  it("takes form and text/plain JSON bodies, and without scope gives readonly", async () => {
    const s = await setup();
    const form = await call("POST", DEVICE, { headers: { "content-type": "application/x-www-form-urlencoded" }, raw: `client_id=${s.client.client_id}` });
    expect(form.status).toBe(200);
    const row = await (await db()).deviceAuthorization.findUniqueOrThrow({ where: { userCode: String(form.json.user_code).replace("-", "") } });
    expect(row.scopes).toBe("readonly");
    const text = await call("POST", DEVICE, { headers: { "content-type": "text/plain" }, raw: JSON.stringify({ client_id: s.client.client_id, scope: "readwrite" }) });
    expect(text.status).toBe(200);
  });

  it.each([
    ["an unknown scope", (c: Registered) => ({ body: { client_id: c.client_id, scope: "readonly admin" } }), 400, "invalid_scope"],
    ["an unknown client", () => ({ body: { client_id: "nobody" } }), 401, "invalid_client"],
    ["a malformed JSON body", () => ({ headers: { "content-type": "application/json" }, raw: "{not json" }), 400, "invalid_request"],
    ["an empty body", () => ({ headers: { "content-type": "application/json" }, raw: "" }), 400, "invalid_request"],
    ["a client_id that is not a string", () => ({ body: { client_id: 42 } }), 400, "invalid_request"],
  ])("refuses %s", async (_name, request, status, error) => {
    const s = await setup();
    const res = await call("POST", DEVICE, request(s.client) as Parameters<typeof call>[2]);
    expect(res.status).toBe(status);
    expect(res.json).toEqual({ error });
  });

  it("authenticates a confidential device client, and refuses clients of other grant types with unauthorized_client", async () => {
    const s = await setup({ isPublic: false });
    expect(s.client.client_secret).toBeTruthy();
    const noSecret = await call("POST", DEVICE, { body: { client_id: s.client.client_id } });
    expect(noSecret.status).toBe(401);
    expect(noSecret.json).toEqual({ error: "invalid_client" });
    expect((await call("POST", DEVICE, { body: credentials(s.client) })).status).toBe(200);
    const codeClient = await makeClient({ ownerId: s.owner.id, grantType: "authorization_code" });
    const wrongGrant = await call("POST", DEVICE, { body: credentials(codeClient) });
    expect(wrongGrant.status).toBe(400);
    expect(wrongGrant.json).toEqual({ error: "unauthorized_client" });
  });
});

describe("the /device form (RFC 8628 3.3)", () => {
  it("accepts the code in any case, with or without the dash or spaces, and leads to the consent page showing the code", async () => {
    const s = await setup();
    for (const variant of [(c: string) => c.toLowerCase(), (c: string) => c.replace("-", ""), (c: string) => ` ${c.slice(0, 2)} ${c.slice(2).toLowerCase()} `]) {
      const started = await start(s.client);
      const res = await typeCode(s, variant(started.user_code));
      expect(res.status).toBe(303);
      const sealed = new URL(res.headers.get("location")!, ISS).searchParams.get("request")!;
      const screen = await loadConsentScreen(sealed, s.user.id);
      expect(screen).toMatchObject({ clientName: "Test client", ownerName: "Device Maker", scopes: ["readonly"], redirectHost: null, userCode: started.user_code });
    }
  });

  it("Approve leads to the page saying the device may continue; Deny to the page saying it will not get access", async () => {
    const s = await setup();
    const approved = await approve(s, (await start(s.client)).user_code);
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")).toBe("/device?done=approved");
    const denied = await approve(s, (await start(s.client)).user_code, "deny");
    expect(denied.headers.get("location")).toBe("/device?done=denied");
  });

  it("a code decided once cannot be decided again, and an expired one is a wrong code", async () => {
    const s = await setup();
    const started = await start(s.client);
    const typed = await typeCode(s, started.user_code);
    expect((await decide(s, typed.headers.get("location")!, "approve")).headers.get("location")).toBe("/device?done=approved");
    expect((await decide(s, typed.headers.get("location")!, "deny")).headers.get("location")).toBe("/device?error=expired");
    expect((await typeCode(s, started.user_code)).headers.get("location")).toMatch(/[?&]error=invalid$/);

    const late = await start(s.client);
    advanceClock(601_000);
    expect((await typeCode(s, late.user_code)).headers.get("location")).toMatch(/[?&]error=invalid$/);
  });

  it("refuses a post from another origin or with a wrong CSRF token, and sends a signed-out person to sign in", async () => {
    const s = await setup();
    const { user_code } = await start(s.client);
    const foreign = await typeCode(s, user_code, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain("Request refused");
    expect((await typeCode(s, user_code, { csrf: "forged" })).status).toBe(403);
    const signedOut = await typeCode(s, user_code, { cookie: "" });
    expect(signedOut.status).toBe(303);
    const login = new URL(signedOut.headers.get("location")!, ISS);
    expect(login.pathname).toBe("/login");
    expect(login.searchParams.get("callbackUrl")).toBe(`/device?user_code=${encodeURIComponent(user_code)}`);
  });

  it("limits wrong codes per person: after 10 in 15 minutes a 429 page, even for the right code, for that person only", async () => {
    const s = await setup();
    const { user_code } = await start(s.client);
    for (let i = 0; i < 10; i++) {
      const wrong = await typeCode(s, i % 2 ? "BBBB-BBBB" : "not a code");
      expect(wrong.status).toBe(303);
      expect(wrong.headers.get("location")).toMatch(/[?&]error=invalid$/);
    }
    const limited = await typeCode(s, user_code);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.text).toContain("Too many wrong codes");
    const events = await (await db()).auditEvent.findMany({ where: { type: "rate_limited", userId: s.user.id } });
    expect(events).toHaveLength(1);

    const other = await makeUser();
    const otherSetup = { ...s, user: other, cookie: await sessionCookie(other) };
    expect((await typeCode(otherSetup, user_code)).headers.get("location")).toMatch(/^\/consent\?/);

    advanceClock(15 * 60 * 1000 + 1000);
    expect((await typeCode(s, (await start(s.client)).user_code)).headers.get("location")).toMatch(/^\/consent\?/);
  });
});

describe("polling the token endpoint (RFC 8628 3.4, 3.5)", () => {
  it("authorization_pending, slow_down when too soon (the interval grows by 5 s), then pending again after waiting", async () => {
    const s = await setup();
    const { device_code, user_code } = await start(s.client);
    const first = await poll(s.client, device_code);
    expect(first.status).toBe(400);
    expect(first.json).toEqual({ error: "authorization_pending" });
    expect(first.headers.get("cache-control")).toBeNull();

    const tooSoon = await poll(s.client, device_code);
    expect(tooSoon.status).toBe(400);
    expect(tooSoon.json).toEqual({ error: "slow_down" });
    const row = await (await db()).deviceAuthorization.findUniqueOrThrow({ where: { userCode: user_code.replace("-", "") } });
    expect(row.interval).toBe(10);

    advanceClock(6_000); // enough before, no longer
    expect((await poll(s.client, device_code)).json).toEqual({ error: "slow_down" });
    advanceClock(15_000);
    expect((await poll(s.client, device_code)).json).toEqual({ error: "authorization_pending" });
  });

  it("after Approve: the token record with a refresh token, once; later polls are invalid_grant and revoke nothing", async () => {
    const s = await setup();
    const { device_code, user_code } = await start(s.client, "readonly readwrite");
    expect((await approve(s, user_code)).headers.get("location")).toBe("/device?done=approved");
    const res = await poll(s.client, device_code);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json).toMatchObject({ scopes: ["readonly", "readwrite"], scope: "readonly readwrite", user: `/api/user/${s.user.id}/`, expires_in: 3600, token_type: "Bearer" });
    expect(res.json.resource_uri).toBe(`/api/oauth2token/${res.json.access_token}/`);
    expect(typeof res.json.refresh_token).toBe("string");
    expect(res.json.id_token).toBeUndefined();

    const again = await poll(s.client, device_code);
    expect(again.status).toBe(400);
    expect(again.json).toEqual({ error: "invalid_grant" });
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: String(res.json.access_token) })).status).toBe(200);

    const refreshed = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: res.json.refresh_token, client_id: s.client.client_id } });
    expect(refreshed.status).toBe(200);
    expect(refreshed.json.scope).toBe("readonly readwrite");

    const events = await (await db()).auditEvent.findMany({ where: { userId: s.user.id, clientId: s.client.client_id } });
    expect(events.map((event) => event.type).sort()).toEqual(["consent.granted", "token.issued", "token.refreshed"]);
  });

  it("of eight overlapping polls of an approved code exactly one gets the tokens, the others invalid_grant", async () => {
    const s = await setup();
    const { device_code, user_code } = await start(s.client);
    await approve(s, user_code);
    const barrier = new Barrier(8);
    const body = { grant_type: GRANT, device_code, ...credentials(s.client) };
    const results = await together(barrier, Array.from({ length: 8 }, () => call("POST", TOKEN, { body, heldBy: barrier })));
    // All eight handlers had started reading their bodies before any body arrived: they overlapped. (Polls
    // that both read the row before either claims it are lined up in device-code-overlapping-polls.int.test.ts,
    // which is the test that fails when the claim is not conditional.)
    expect(barrier.arrived).toBe(8);
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 200).map((r) => ({ status: r.status, json: r.json }))).toEqual(Array(7).fill({ status: 400, json: { error: "invalid_grant" } }));
    expect(await (await db()).accessToken.count({ where: { userId: s.user.id } })).toBe(1);
  });

  it("of overlapping polls of a pending code one is pending, the others slow_down", async () => {
    const s = await setup();
    const { device_code } = await start(s.client);
    const barrier = new Barrier(4);
    const body = { grant_type: GRANT, device_code, ...credentials(s.client) };
    const results = await together(barrier, Array.from({ length: 4 }, () => call("POST", TOKEN, { body, heldBy: barrier })));
    expect(barrier.arrived).toBe(4);
    expect(results.map((r) => r.json.error).sort()).toEqual(["authorization_pending", "slow_down", "slow_down", "slow_down"]);
  });

  it("after Deny: access_denied", async () => {
    const s = await setup();
    const { device_code, user_code } = await start(s.client);
    await approve(s, user_code, "deny");
    const res = await poll(s.client, device_code);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "access_denied" });
  });

  it("after expires_in: expired_token, also when approved but never collected", async () => {
    const s = await setup();
    const pending = await start(s.client);
    const approved = await start(s.client);
    await approve(s, approved.user_code);
    advanceClock(601_000);
    for (const started of [pending, approved]) {
      const res = await poll(s.client, started.device_code);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: "expired_token" });
    }
  });

  it("a device code of another client, or an unknown one, is invalid_grant; a client of another grant type is unauthorized_client", async () => {
    const s = await setup();
    const other = await setup();
    const { device_code, user_code } = await start(s.client);
    await approve(s, user_code);
    expect((await poll(other.client, device_code)).json).toEqual({ error: "invalid_grant" });
    expect((await poll(s.client, "no-such-device-code")).json).toEqual({ error: "invalid_grant" });
    expect((await call("POST", TOKEN, { body: { grant_type: GRANT, client_id: s.client.client_id } })).json).toEqual({ error: "invalid_request" });
    const passwordClient = await makeClient({ ownerId: s.owner.id });
    const wrong = await call("POST", TOKEN, { body: { grant_type: GRANT, device_code, client_id: passwordClient.client_id, client_secret: passwordClient.client_secret } });
    expect(wrong.status).toBe(400);
    expect(wrong.json).toEqual({ error: "unauthorized_client" });
    // The rightful client still gets its tokens.
    expect((await poll(s.client, device_code)).status).toBe(200);
  });

  it("with openid: an id_token for the person who approved, with their auth_time and no nonce", async () => {
    const s = await setup();
    const authTime = Math.floor(nowMs() / 1000) - 30;
    const cookie = await sessionCookie(s.user, 0, authTime);
    const { device_code, user_code } = await start(s.client, "openid email");
    await approve({ ...s, cookie }, user_code);
    const res = await poll(s.client, device_code);
    expect(res.status).toBe(200);
    const claims = decodeJwt(String(res.json.id_token));
    expect(claims).toMatchObject({ iss: ISS, sub: String(s.user.id), aud: s.client.client_id, auth_time: authTime, amr: ["pwd"], email: s.user.email });
    expect(claims.nonce).toBeUndefined();
  });
});

describe("client registration for the new grant types", () => {
  it("a device_code client needs no redirect URI and refuses them; a client_credentials client must be confidential", async () => {
    const owner = await makeUser();
    await expect(makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: ["https://x.example/cb"] })).rejects.toMatchObject({ status: 400, error: "redirect_uris: a device_code client has no redirect URIs" });
    await expect(makeClient({ ownerId: owner.id, grantType: "client_credentials", isPublic: true, redirectUris: [] })).rejects.toMatchObject({ status: 400, error: "public: a client_credentials client must keep a secret" });
    const device = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
    expect(device).toMatchObject({ grant_type: "device_code", public: true, client_secret: null, redirect_uris: [] });
  });

  it("deleting a device client removes its pending device authorizations", async () => {
    const s = await setup();
    const { user_code } = await start(s.client);
    await write((tx) => tx.client.delete({ where: { clientId: s.client.client_id } }));
    expect(await (await db()).deviceAuthorization.findUnique({ where: { userCode: user_code.replace("-", "") } })).toBeNull();
  });
});
