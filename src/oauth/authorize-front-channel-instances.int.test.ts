// prompt=login across server instances (docs/rules/tokens.md#front-channel; RFC 9126 4): the time a plain
// request was received, signed into its way back by one instance, is taken by another (the key derives from
// the shared AUTH_SECRET), a forged one is not; a pushed request's row, in the shared database, decides on
// every instance whatever the URL adds.
import { describe, expect, it } from "vitest";
import { nowMs } from "@/clock";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { startedInstances } from "@/testing/instance";
import { sessionCookie } from "@/testing/session";

const AUTH = "/api/connect/oauth2/auth/";
const PAR = "/api/connect/oauth2/par/";
const REDIRECT = "https://client.example.test/callback";
const ISS = "http://localhost:3000";

/** The second instance, another process on the same database (started before the tests). */
const instances = startedInstances(1);

const seconds = () => Math.floor(nowMs() / 1000);

async function setup() {
  const user = await makeUser();
  const client = await makeClient({ ownerId: user.id, grantType: "authorization_code", firstParty: true });
  // Signed in a minute ago: before any request of the test.
  return { user, client, stale: await sessionCookie(user, 0, seconds() - 60) };
}

/** GET on the second instance, without following redirects. */
const there = (path: string, cookie: string) => fetch(`${instances[0]!.url}${path}`, { headers: { cookie }, redirect: "manual" });

/** The way back from a sign-in redirect (this instance's `call` or the second's fetch). */
function wayBack(location: string | null): string {
  const login = new URL(location!, ISS);
  expect(login.pathname).toBe("/login");
  expect(login.searchParams.get("prompt")).toBe("login");
  return login.searchParams.get("callbackUrl")!;
}

function codeAt(location: string | null): string | null {
  const url = new URL(location!, ISS);
  expect(url.origin + url.pathname).toBe(REDIRECT);
  return url.searchParams.get("code");
}

describe("prompt=login on two instances", () => {
  it("a plain request's way back signed by this instance is met on the other by a later sign-in only; a forged one is ignored there", async () => {
    const s = await setup();
    const query = new URLSearchParams({ response_type: "code", client_id: s.client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "two", prompt: "login" });
    const back = wayBack((await call("GET", `${AUTH}?${query}`, { headers: { cookie: s.stale } })).headers.get("location"));
    // The old session on the other instance is sent to sign in, with the signed time or a forged one.
    expect(wayBack((await there(back, s.stale)).headers.get("location"))).toBe(back);
    const forged = new URL(back, ISS);
    forged.searchParams.set("auth_after", String(seconds() - 3600));
    wayBack((await there(forged.pathname + forged.search, s.stale)).headers.get("location"));
    // A sign-in after the request: the other instance issues the code.
    expect(codeAt((await there(back, await sessionCookie(s.user, 0, seconds()))).headers.get("location"))).toMatch(/^[\w-]{43}$/);
  });

  it("a pushed prompt=login asks for the password on the other instance whatever the URL adds, and a later sign-in goes on", async () => {
    const s = await setup();
    const body = new URLSearchParams({ response_type: "code", client_id: s.client.client_id, client_secret: s.client.client_secret!, redirect_uri: REDIRECT, scope: "readonly", state: "two-par", prompt: "login" });
    const pushed = await call("POST", PAR, { raw: body.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(pushed.status).toBe(201);
    const path = `${AUTH}?${new URLSearchParams({ client_id: s.client.client_id, request_uri: String(pushed.json.request_uri) })}`;
    const back = wayBack((await there(`${path}&auth_after=0&prompt=none&max_age=99999`, s.stale)).headers.get("location"));
    expect(back).toBe(path);
    expect(codeAt((await there(back, await sessionCookie(s.user, 0, seconds()))).headers.get("location"))).toMatch(/^[\w-]{43}$/);
  });
});
