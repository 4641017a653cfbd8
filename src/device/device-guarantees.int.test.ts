// The guarantees of the device flow's browser side and of its per-client cap, each on its own (RFC 8628 3.1,
// 3.3, 5.1; docs/rules/tokens.md#device-flow, docs/rules/pages.md#device-page, docs/rules/accounts.md#limits):
// a decision changes its own device authorization and nothing else, a denial records no consent, the /device
// form answers every malformed post with a page (never a 500), and the cap of live device authorizations
// counts only the client's other unexpired ones and says when the first of them ends.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, now, resetClock } from "@/clock";
import { consentCsrfToken, sealRequest } from "@/oauth/authorization-request";
import { db, write } from "@/db/client";
import { digest, randomSecret } from "@/secrets";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { Barrier, together } from "@/testing/race";
import { sessionCookie } from "@/testing/session";
import { deviceFormCsrfToken } from "@/device/verify-user-code";
import { MAX_LIVE_DEVICE_AUTHORIZATIONS } from "@/device/start-device-authorization";

const DEVICE = "/api/connect/oauth2/device/";
const ISS = "http://localhost:3000";

afterEach(() => resetClock());

async function setup() {
  const owner = await makeUser({ name: "Device Maker" });
  const user = await makeUser({ name: "Dora Device" });
  const client = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
  return { owner, user, client, cookie: await sessionCookie(user) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

async function start(s: Setup) {
  const res = await call("POST", DEVICE, { body: { client_id: s.client.client_id } });
  expect(res.status).toBe(200);
  return res.json as { device_code: string; user_code: string };
}

/** Posts the /device form with exactly these fields. */
function post(s: Setup, fields: Record<string, string>, cookie = s.cookie) {
  return call("POST", "/device/verify", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie },
    raw: new URLSearchParams(fields).toString(),
  });
}

function decide(s: Setup, sealed: string, decision: "approve" | "deny") {
  const form = new URLSearchParams({ request: sealed, csrf: consentCsrfToken(s.user.id, sealed), decision });
  return call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie: s.cookie }, raw: form.toString() });
}

async function typed(s: Setup, userCode: string) {
  const res = await post(s, { user_code: userCode, csrf: deviceFormCsrfToken(s.user.id) });
  expect(res.status).toBe(303);
  return new URL(res.headers.get("location")!, ISS).searchParams.get("request")!;
}

const rowOf = async (userCode: string) => (await db()).deviceAuthorization.findUniqueOrThrow({ where: { userCode: userCode.replace("-", "") } });

describe("a decision on a device authorization", () => {
  it("approving one code leaves the client's other pending codes pending", async () => {
    const s = await setup();
    const first = await start(s);
    const second = await start(s);
    expect((await decide(s, await typed(s, first.user_code), "approve")).headers.get("location")).toBe("/device?done=approved");
    expect((await rowOf(first.user_code)).status).toBe("approved");
    expect((await rowOf(second.user_code)).status).toBe("pending");
  });

  it("a code that expired after it was typed cannot be approved: the page says so", async () => {
    const s = await setup();
    const started = await start(s);
    advanceClock(300_000);
    const sealed = await typed(s, started.user_code); // the seal lasts ten minutes from here, the code five more
    advanceClock(301_000);
    expect((await decide(s, sealed, "approve")).headers.get("location")).toBe("/device?error=expired");
    expect((await rowOf(started.user_code)).status).toBe("pending");
  });

  it("a sealed device request that names no device authorization is refused with a page and approves nothing", async () => {
    const s = await setup();
    const pending = await start(s);
    const sealed = sealRequest({ clientId: s.client.client_id, userId: s.user.id, responseType: "device_code", redirectUri: "", scopes: ["readonly"], state: "", codeChallenge: null, nonce: null, authTime: Math.floor(now().getTime() / 1000) });
    const res = await decide(s, sealed, "approve");
    expect(res.status).toBe(400);
    expect(res.text).toContain("Request expired");
    expect(res.text).toContain("Type the code from your device again.");
    expect(res.text).toContain("invalid_request");
    expect(res.text).toContain(s.client.client_id);
    expect((await rowOf(pending.user_code)).status).toBe("pending");
  });

  it("Deny records no consent; Approve records consent.granted with the device flow and the scope", async () => {
    const s = await setup();
    const denied = await start(s);
    expect((await decide(s, await typed(s, denied.user_code), "deny")).headers.get("location")).toBe("/device?done=denied");
    const consents = () => db().then((d) => d.auditEvent.findMany({ where: { type: "consent.granted", userId: s.user.id } }));
    expect(await consents()).toHaveLength(0);
    const approved = await start(s);
    await decide(s, await typed(s, approved.user_code), "approve");
    const events = await consents();
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.detail!)).toEqual({ flow: "device_code", scope: "readonly" });
  });
});

describe("the /device form answers malformed posts with a page", () => {
  it("a post without user_code is a wrong code: back to /device?error=invalid", async () => {
    const s = await setup();
    const res = await post(s, { csrf: deviceFormCsrfToken(s.user.id) });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/device?error=invalid");
  });

  it("a wrong code goes back to the form with what was typed, trimmed and cut at 32 characters", async () => {
    const s = await setup();
    const long = `  ${"x".repeat(40)}  `;
    const res = await post(s, { user_code: long, csrf: deviceFormCsrfToken(s.user.id) });
    expect(res.headers.get("location")).toBe(`/device?user_code=${"x".repeat(32)}&error=invalid`);
  });

  it("a post without csrf, or with an unreadable body, is refused with the 403 page", async () => {
    const s = await setup();
    const { user_code } = await start(s);
    const noCsrf = await post(s, { user_code });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.text).toContain("The form was not valid for your session. Open the device page again.");
    expect(noCsrf.text).toContain("invalid_request");
    const unreadable = await call("POST", "/device/verify", { headers: { "content-type": "application/json", origin: ISS, cookie: s.cookie }, raw: "{not json" });
    expect(unreadable.status).toBe(403);
    expect(unreadable.text).toContain("Request refused");
  });

  it("a post from another origin gets the page that names the device page", async () => {
    const s = await setup();
    const res = await call("POST", "/device/verify", { headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example", cookie: s.cookie }, raw: "user_code=x" });
    expect(res.status).toBe(403);
    expect(res.text).toContain("This form can only be sent from this site");
    expect(res.text).toContain("invalid_request");
  });

  it("a signed-out post without a code is sent to sign in and back to /device", async () => {
    const s = await setup();
    const res = await post(s, {}, "");
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get("location")!, ISS).searchParams.get("callbackUrl")).toBe("/device");
  });

  it("a session from before sign-ins recorded their time signs in again, with prompt=login, before any code is looked up", async () => {
    const s = await setup();
    const { user_code } = await start(s);
    const res = await post(s, { user_code, csrf: deviceFormCsrfToken(s.user.id) }, await sessionCookie(s.user, 0, null));
    expect(res.status).toBe(303);
    const login = new URL(res.headers.get("location")!, ISS);
    expect(login.pathname).toBe("/login");
    expect(login.searchParams.get("prompt")).toBe("login");
    expect(login.searchParams.get("callbackUrl")).toBe(`/device?user_code=${user_code}`);
  });
});

describe("the limit on wrong codes", () => {
  it("the 429 page says when to come back (what is left of the window) and records the limit's name", async () => {
    const s = await setup();
    for (let i = 0; i < 10; i++) await post(s, { user_code: "BBBB-BBBB", csrf: deviceFormCsrfToken(s.user.id) });
    advanceClock(5 * 60 * 1000);
    const limited = await post(s, { user_code: "BBBB-BBBB", csrf: deviceFormCsrfToken(s.user.id) });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(500);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(limited.text).toContain("You typed too many wrong codes.");
    expect(limited.text).toContain("rate_limited");
    const [event] = await (await db()).auditEvent.findMany({ where: { type: "rate_limited", userId: s.user.id } });
    expect(JSON.parse(event!.detail!)).toEqual({ limit: "device user code" });
  });
});

describe("the cap of live device authorizations per client (docs/rules/accounts.md#limits)", () => {
  /** `count` device authorizations of the client, inserted directly, expiring `inSeconds` from now. */
  async function insert(clientId: string, count: number, inSeconds: number) {
    const client = await (await db()).client.findUniqueOrThrow({ where: { clientId } });
    await write((tx) =>
      tx.deviceAuthorization.createMany({
        data: Array.from({ length: count }, () => ({
          deviceCodeDigest: digest(randomSecret()),
          userCode: randomSecret(12),
          clientId: client.id,
          scopes: "readonly",
          expiresAt: new Date(now().getTime() + inSeconds * 1000),
        })),
      }),
    );
  }

  it("the last live one under the cap is given; expired ones do not count", async () => {
    const s = await setup();
    await insert(s.client.client_id, MAX_LIVE_DEVICE_AUTHORIZATIONS - 1, 300);
    await insert(s.client.client_id, 5, -1);
    await start(s);
  });

  it("over the cap: 429 rate_limited with Retry-After until the first live one expires, recorded for the client", async () => {
    const s = await setup();
    await insert(s.client.client_id, MAX_LIVE_DEVICE_AUTHORIZATIONS - 1, 400);
    await insert(s.client.client_id, 1, 120); // inserted last, expires first
    const res = await call("POST", DEVICE, { body: { client_id: s.client.client_id } });
    expect(res.status).toBe(429);
    expect(res.json).toEqual({ error: "rate_limited" });
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(100);
    expect(retryAfter).toBeLessThanOrEqual(120);
    const events = await (await db()).auditEvent.findMany({ where: { type: "rate_limited", clientId: s.client.client_id } });
    expect(events.map((e) => JSON.parse(e.detail!))).toEqual([{ limit: "device authorizations" }]);
  });

  it("of eight requests sent at once with room for two, two are given and six refused (PostgreSQL: the per-client lock)", async () => {
    const s = await setup();
    await insert(s.client.client_id, MAX_LIVE_DEVICE_AUTHORIZATIONS - 2, 300);
    const barrier = new Barrier(8);
    const results = await together(barrier, Array.from({ length: 8 }, () => call("POST", DEVICE, { body: { client_id: s.client.client_id }, heldBy: barrier })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 429, 429, 429, 429, 429, 429]);
    const client = await (await db()).client.findUniqueOrThrow({ where: { clientId: s.client.client_id } });
    expect(await (await db()).deviceAuthorization.count({ where: { clientId: client.id } })).toBe(MAX_LIVE_DEVICE_AUTHORIZATIONS);
  });
});
