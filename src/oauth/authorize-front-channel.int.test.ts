// The authorization endpoint never takes an unsigned front-channel parameter that weakens a request
// (RFC 9126 4; OpenID Connect Core 3.1.2.1 prompt=login and max_age; docs/rules/tokens.md#front-channel). A
// pushed request is decided by its stored parameters alone, whatever the authorization URL adds; prompt=login
// is met only by a sign-in made after the request was received (for a plain request, that time crosses the
// sign-in page under an HMAC, bound to the request and ten minutes long); max_age is measured against the
// session's sign-in time. Attacks: `auth_after=0` (or any other value, signed for another request, expired,
// forged) appended to the authorization URL or to the way back from the sign-in page.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const AUTH = "/api/connect/oauth2/auth/";
const PAR = "/api/connect/oauth2/par/";
const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test/callback";
const ISS = "http://localhost:3000";

// A clock that stands still, so that sign-in times are exact.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-05-01T08:00:00.250Z") });
});
afterEach(() => {
  vi.useRealTimers();
  resetClock();
});

const seconds = () => Math.floor(nowMs() / 1000);

/** A first-party confidential code client (no consent page) and a person who signed in `age` seconds ago. */
async function setup(age = 600) {
  const user = await makeUser();
  const client = await makeClient({ ownerId: user.id, grantType: "authorization_code", firstParty: true });
  return { user, client, cookie: await sessionCookie(user, 0, seconds() - age) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

const plainParams = (s: Setup, params: Record<string, string> = {}) => ({ response_type: "code", client_id: s.client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "st-fc", ...params });
const plainUrl = (s: Setup, params: Record<string, string> = {}) => `${AUTH}?${new URLSearchParams(plainParams(s, params))}`;

const get = (path: string, cookie: string | null) => call("GET", path, { headers: cookie ? { cookie } : {} });
const locationOf = (res: { headers: Headers }) => new URL(res.headers.get("location")!, ISS);
const freshCookie = (s: Setup) => sessionCookie(s.user, 0, seconds());

/** The sign-in page asking for the password; returns the way back (path and query). */
function passwordAsked(res: { status: number; headers: Headers }): string {
  expect(res.status).toBe(302);
  const login = locationOf(res);
  expect(login.pathname).toBe("/login");
  expect(login.searchParams.get("prompt")).toBe("login");
  const back = new URL(login.searchParams.get("callbackUrl")!, ISS);
  expect(back.pathname).toBe(AUTH);
  return back.pathname + back.search;
}

/** A code at the client's registered redirect URI, with the request's own state. */
function codeOf(res: { status: number; headers: Headers }, state: string): string {
  expect(res.status).toBe(302);
  const url = locationOf(res);
  expect(url.origin + url.pathname).toBe(REDIRECT);
  expect(url.searchParams.get("state")).toBe(state);
  const code = url.searchParams.get("code");
  expect(code).toMatch(/^[\w-]{43}$/);
  return code!;
}

async function exchange(s: Setup, code: string) {
  const res = await call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: s.client.client_id, client_secret: s.client.client_secret } });
  expect(res.status).toBe(200);
}

/** Appends raw parameters to a path that already has a query. */
const withExtra = (path: string, extra: Record<string, string>) => `${path}&${new URLSearchParams(extra)}`;

/** Replaces (or adds) one parameter of a path's query. */
function withParam(path: string, name: string, value: string): string {
  const url = new URL(path, ISS);
  url.searchParams.set(name, value);
  return url.pathname + url.search;
}

// Every extra an attacker could append: an unsigned auth_after, a prompt or max_age that would weaken the
// stored ones, another redirect URI, another scope, a state.
const EXTRAS: Array<[string, Record<string, string>]> = [
  ["auth_after=0", { auth_after: "0" }],
  ["auth_after=now", { auth_after: String(Math.floor(Date.parse("2026-05-01T08:00:00Z") / 1000)) }],
  ["prompt=none", { prompt: "none" }],
  ["max_age=99999", { max_age: "99999" }],
  ["redirect_uri", { redirect_uri: "https://evil.example/cb" }],
  ["scope", { scope: "readwrite openid" }],
  ["all of them", { auth_after: "0", prompt: "none", max_age: "99999", redirect_uri: "https://evil.example/cb", scope: "readwrite", state: "forged" }],
];

describe("a pushed request (RFC 9126 4): the stored parameters alone decide", () => {
  async function pushed(s: Setup, params: Record<string, string>) {
    const body = new URLSearchParams({ ...plainParams(s, { state: "st-par" }), client_secret: s.client.client_secret!, ...params });
    const res = await call("POST", PAR, { raw: body.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(201);
    return `${AUTH}?${new URLSearchParams({ client_id: s.client.client_id, request_uri: String(res.json.request_uri) })}`;
  }

  describe.each([
    ["prompt=login", { prompt: "login" }],
    ["max_age=0", { max_age: "0" }],
    ["max_age=60 (the session signed in 600 s ago)", { max_age: "60" }],
  ])("pushed with %s", (_name, params) => {
    it.each(EXTRAS)("the authorization URL with %s appended still asks for the password", async (_extra, extra) => {
      const s = await setup(600);
      const path = await pushed(s, params);
      // Straight to the authorization endpoint, and again on the way back that the sign-in page would take.
      const back = passwordAsked(await get(withExtra(path, extra), s.cookie));
      expect(Object.fromEntries(new URL(back, ISS).searchParams)).toEqual(Object.fromEntries(new URL(path, ISS).searchParams));
      passwordAsked(await get(withExtra(back, extra), s.cookie));
      // A sign-in after the push satisfies it; the pushed state and redirect URI are the ones used.
      advanceClock(2_000);
      await exchange(s, codeOf(await get(withExtra(back, extra), await freshCookie(s)), "st-par"));
    });
  });

  it("a pushed max_age is measured against the session's sign-in time: a recent enough session goes on at once", async () => {
    const s = await setup(600);
    codeOf(await get(await pushed(s, { max_age: "900" }), s.cookie), "st-par");
  });

  it("a pushed prompt=login is not met by a sign-in made before the push, even in the same minute", async () => {
    const s = await setup(1);
    const path = await pushed(s, { prompt: "login" });
    passwordAsked(await get(withExtra(path, { auth_after: String(seconds() - 1) }), s.cookie));
  });
});

describe("a plain request with prompt=login", () => {
  it("a session that signed in before the request is sent to sign in, also when it comes back without signing in; a sign-in after it gives a code", async () => {
    const s = await setup(10);
    const back = passwordAsked(await get(plainUrl(s, { prompt: "login" }), s.cookie));
    // The way back still says prompt=login: the time carried with it is what lets a fresh sign-in through.
    expect(new URL(back, ISS).searchParams.get("prompt")).toBe("login");
    passwordAsked(await get(back, s.cookie));
    advanceClock(3_000);
    await exchange(s, codeOf(await get(back, await freshCookie(s)), "st-fc"));
  });

  it("a signed-out visitor signs in, and the request goes on once", async () => {
    const s = await setup();
    const back = passwordAsked(await get(plainUrl(s, { prompt: "login" }), null));
    advanceClock(5_000);
    codeOf(await get(back, await freshCookie(s)), "st-fc");
  });

  it.each([
    ["auth_after=0", "0"],
    ["an unsigned auth_after of the session's sign-in time", "SIGNED_IN"],
    ["a number with a made-up signature", "SIGNED_IN.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
  ])("a forged auth_after on the way back (%s) is ignored: the old session is sent to sign in", async (_name, value) => {
    const s = await setup(10);
    const back = passwordAsked(await get(plainUrl(s, { prompt: "login" }), s.cookie));
    const forged = withParam(back, "auth_after", value.replace("SIGNED_IN", String(seconds() - 10)));
    passwordAsked(await get(forged, s.cookie));
    // The same forgeries on the first request.
    passwordAsked(await get(plainUrl(s, { prompt: "login", auth_after: value.replace("SIGNED_IN", String(seconds() - 10)) }), s.cookie));
  });

  it("the time carried by the way back belongs to its request: moved to another request, it is ignored", async () => {
    const s = await setup(10);
    const first = passwordAsked(await get(plainUrl(s, { prompt: "login", state: "first" }), s.cookie));
    const carried = new URL(first, ISS).searchParams.get("auth_after")!;
    // The person signs in after that first request; a later request with prompt=login must not be met by it.
    advanceClock(2_000);
    const signedBetween = await freshCookie(s);
    advanceClock(5_000);
    const later = plainUrl(s, { prompt: "login", state: "later", auth_after: carried });
    passwordAsked(await get(later, signedBetween));
    // The first request's own way back is met by that sign-in.
    codeOf(await get(first, signedBetween), "first");
  });

  it("the way back expires after ten minutes: an old one asks for the password again", async () => {
    const s = await setup(10);
    const back = passwordAsked(await get(plainUrl(s, { prompt: "login" }), s.cookie));
    advanceClock(2_000);
    const signedAfter = await freshCookie(s);
    advanceClock(10 * 60_000);
    const again = passwordAsked(await get(back, signedAfter));
    advanceClock(1_000);
    codeOf(await get(again, await freshCookie(s)), "st-fc");
  });
});

describe("max_age against the session's sign-in time", () => {
  it("a session older than max_age is sent to sign in, also on the way back with auth_after=0 or a larger max_age; a fresh sign-in goes on", async () => {
    const s = await setup(301);
    const back = passwordAsked(await get(plainUrl(s, { max_age: "300" }), s.cookie));
    passwordAsked(await get(back, s.cookie));
    passwordAsked(await get(withParam(back, "auth_after", "0"), s.cookie));
    passwordAsked(await get(withParam(withParam(back, "auth_after", "0"), "prompt", "consent"), s.cookie));
    advanceClock(4_000);
    codeOf(await get(back, await freshCookie(s)), "st-fc");
  });

  it("a session exactly max_age old goes on; one second older must sign in", async () => {
    const s = await setup(300);
    codeOf(await get(plainUrl(s, { max_age: "300" }), s.cookie), "st-fc");
    advanceClock(1_000);
    passwordAsked(await get(plainUrl(s, { max_age: "300" }), s.cookie));
  });

  it("prompt=none with a max_age the session exceeds is login_required, whatever auth_after says", async () => {
    const s = await setup(301);
    const res = await get(plainUrl(s, { max_age: "300", prompt: "none", auth_after: "0" }), s.cookie);
    expect(Object.fromEntries(locationOf(res).searchParams)).toEqual({ error: "login_required", state: "st-fc", iss: ISS });
  });
});
