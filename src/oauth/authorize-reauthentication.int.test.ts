// The authorization endpoint's way to the sign-in page and back (src/oauth/authorize.ts loginRedirect,
// needsLogin; OpenID Connect Core 3.1.2.1 prompt=login and max_age; docs/rules/tokens.md#front-channel): who
// is asked to type the password again, what the way back carries (the request as sent, plus the time it was
// received, signed, in auth_after), that coming back without a fresh sign-in does not skip it, and the
// boundaries of max_age and of that time (a session exactly as old as max_age, or signed in the same second as
// the request, goes on).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const AUTH = "/api/connect/oauth2/auth/";
const PAR = "/api/connect/oauth2/par/";
const REDIRECT = "https://client.example.test/callback";
const ISS = "http://localhost:3000";

// A clock that stands still, so that "the same second" is exact.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-03-01T12:00:00.250Z") });
});
afterEach(() => {
  vi.useRealTimers();
  resetClock();
});

const seconds = () => Math.floor(nowMs() / 1000);

/** A first-party confidential code client (no consent page), and a person signed in `authTime`. */
async function setup(authTime: number | null = seconds()) {
  const user = await makeUser();
  const client = await makeClient({ ownerId: user.id, grantType: "authorization_code", firstParty: true });
  return { user, client, cookie: await sessionCookie(user, 0, authTime) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

function query(s: Setup, params: Record<string, string> = {}) {
  return new URLSearchParams({ response_type: "code", client_id: s.client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "st-re", ...params }).toString();
}

const get = (path: string, cookie: string | null) => call("GET", path, { headers: cookie ? { cookie } : {} });
const locationOf = (res: { headers: Headers }) => new URL(res.headers.get("location")!, ISS);

/** The sign-in redirect: whether it asks for the password again, and the request it returns to. */
function signIn(res: { status: number; headers: Headers }) {
  expect(res.status).toBe(302);
  const login = locationOf(res);
  expect(login.pathname).toBe("/login");
  expect([...login.searchParams.keys()].sort()).toEqual(login.searchParams.has("prompt") ? ["callbackUrl", "prompt"] : ["callbackUrl"]);
  const back = new URL(login.searchParams.get("callbackUrl")!, ISS);
  expect(back.pathname).toBe(AUTH);
  return { reauthenticate: login.searchParams.get("prompt") === "login", back, path: back.pathname + back.search };
}

const codeOf = (res: { status: number; headers: Headers }) => {
  expect(res.status).toBe(302);
  const url = locationOf(res);
  expect(url.origin + url.pathname).toBe(REDIRECT);
  return url.searchParams.get("code");
};

describe("the way to the sign-in page", () => {
  it("a signed-out visitor's plain request comes back unchanged, without the client_secret, and is not a re-authentication", async () => {
    const s = await setup();
    const sent = query(s, { client_secret: s.client.client_secret! });
    const { reauthenticate, back } = signIn(await get(`${AUTH}?${sent}`, null));
    expect(reauthenticate).toBe(false);
    const expected = new URLSearchParams(sent);
    expected.delete("client_secret");
    expect(Object.fromEntries(back.searchParams)).toEqual(Object.fromEntries(expected));
  });

  it.each([
    ["prompt=login", { prompt: "login" }],
    ["a max_age", { max_age: "300" }],
  ])("a signed-out visitor asked for %s must type the password, and comes back with the request as sent plus the signed time it was received", async (_name, params) => {
    const s = await setup();
    const sent = query(s, params);
    const { reauthenticate, back } = signIn(await get(`${AUTH}?${sent}`, null));
    expect(reauthenticate).toBe(true);
    const { auth_after: authAfter, ...rest } = Object.fromEntries(back.searchParams);
    expect(rest).toEqual(Object.fromEntries(new URLSearchParams(sent)));
    expect(authAfter).toMatch(new RegExp(`^${seconds()}\\.[\\w-]{43}$`));
  });

  it("prompt=login consent: the way back keeps both", async () => {
    const s = await setup();
    const { reauthenticate, back } = signIn(await get(`${AUTH}?${query(s, { prompt: "login consent" })}`, s.cookie));
    expect(reauthenticate).toBe(true);
    expect(back.searchParams.getAll("prompt")).toEqual(["login consent"]);
    expect(back.searchParams.get("auth_after")).toMatch(/^\d+\.[\w-]{43}$/);
  });

  it("a session signed in before the request was received is sent to type the password; one signed in the same second goes on", async () => {
    const s = await setup(seconds() - 1);
    const { reauthenticate, path } = signIn(await get(`${AUTH}?${query(s, { prompt: "login" })}`, s.cookie));
    expect(reauthenticate).toBe(true);
    // The stale session on the way back is sent again, with the same received time.
    const again = signIn(await get(path, s.cookie));
    expect(again.back.searchParams.get("auth_after")).toBe(new URL(path, ISS).searchParams.get("auth_after"));
    expect(codeOf(await get(path, await sessionCookie(s.user, 0, seconds())))).toMatch(/^[\w-]{43}$/);
  });

  it("an auth_after this endpoint did not sign for the request, or a repeated one, is ignored: the request counts as received now", async () => {
    const s = await setup();
    const { path } = signIn(await get(`${AUTH}?${query(s, { prompt: "login" })}`, s.cookie));
    const signed = new URL(path, ISS).searchParams.get("auth_after")!;
    advanceClock(2_000);
    const signedLater = await sessionCookie(s.user, 0, seconds());
    for (const sent of [`${path}&auth_after=${encodeURIComponent(signed)}`, `${path}&auth_after=0`, `${AUTH}?${query(s, { prompt: "login", auth_after: String(seconds() + 3600) })}`, `${AUTH}?${query(s, { prompt: "login", state: "other", auth_after: signed })}`]) {
      const asked = signIn(await get(sent, signedLater));
      expect(asked.reauthenticate).toBe(true);
      expect(asked.back.searchParams.get("auth_after")).toMatch(new RegExp(`^${seconds()}\\.`));
    }
    expect(codeOf(await get(path, signedLater))).toMatch(/^[\w-]{43}$/);
  });

  it("a session that never recorded its sign-in time: a plain request goes on; prompt=login, a max_age or an OpenID request must sign in", async () => {
    const s = await setup(null);
    expect(codeOf(await get(`${AUTH}?${query(s)}`, s.cookie))).toMatch(/^[\w-]{43}$/);
    const asking: Array<Record<string, string>> = [{ prompt: "login" }, { max_age: "3600" }, { scope: "openid readonly" }];
    for (const params of asking) {
      expect(signIn(await get(`${AUTH}?${query(s, params)}`, s.cookie)).reauthenticate).toBe(true);
    }
  });

  it("max_age: a session exactly max_age old goes on; one second older must sign in again", async () => {
    const s = await setup();
    advanceClock(300_000);
    expect(codeOf(await get(`${AUTH}?${query(s, { max_age: "300" })}`, s.cookie))).toMatch(/^[\w-]{43}$/);
    advanceClock(1_000);
    expect(signIn(await get(`${AUTH}?${query(s, { max_age: "300" })}`, s.cookie)).reauthenticate).toBe(true);
  });
});

describe("a pushed request (RFC 9126) through a fresh sign-in", () => {
  async function pushedRequest(s: Setup, params: Record<string, string>) {
    const body = new URLSearchParams(query(s, { client_secret: s.client.client_secret!, ...params }));
    const res = await call("POST", PAR, { raw: body.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(201);
    return `${AUTH}?${new URLSearchParams({ client_id: s.client.client_id, request_uri: String(res.json.request_uri) })}`;
  }

  it.each([
    ["prompt=login", { prompt: "login" }, REDIRECT],
    ["max_age=0", { max_age: "0" }, REDIRECT],
    ["prompt=login consent, which still shows the consent page", { prompt: "login consent" }, "/consent"],
  ])("%s: signs in once, then goes on; the old session coming back without signing in is sent to sign in again", async (_name, params, destination) => {
    const s = await setup(seconds() - 10);
    const path = await pushedRequest(s, params);
    const first = signIn(await get(path, s.cookie));
    expect(first.reauthenticate).toBe(true);
    // The stale session that skips the sign-in page is sent there again.
    expect(signIn(await get(first.path, s.cookie)).reauthenticate).toBe(true);
    advanceClock(2_000);
    const fresh = await get(first.path, await sessionCookie(s.user, 0, seconds()));
    expect(fresh.status).toBe(302);
    const url = locationOf(fresh);
    expect(destination === REDIRECT ? url.origin + url.pathname : url.pathname).toBe(destination);
    if (destination === REDIRECT) expect(url.searchParams.get("code")).toMatch(/^[\w-]{43}$/);
  });
});
