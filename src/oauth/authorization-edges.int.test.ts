// The edges of the authorization endpoint and the consent decision
// (docs/rules/tokens.md#authorization-endpoint, docs/design.md): repeated and empty parameters, PKCE
// parameters that cannot be accepted, redirect URIs with their own query and loopback ports, implicit client
// secrets, an expired or mismatched consent form, scopes remembered across consents; and client authentication
// at the token endpoint (docs/rules/tokens.md#client-authentication) with Basic credentials.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { s256 } from "@/oauth/pkce";
import { db } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

afterEach(() => resetClock());

const AUTH = "/api/connect/oauth2/auth/";
const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test/callback";
const VERIFIER = "v".repeat(43);

type Kind = "authorization_code" | "implicit";

async function setup(grantType: Kind = "authorization_code", extra: { redirectUris?: string[]; isPublic?: boolean } = {}) {
  const owner = await makeUser({ name: "Owner" });
  const user = await makeUser({ name: "User" });
  const client = await makeClient({ ownerId: owner.id, grantType, ...extra });
  return { owner, user, client, cookie: await sessionCookie(user) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

/** GET the authorization endpoint with raw query pairs (so that a name can repeat). */
function authorize(s: Setup, pairs: [string, string][], cookie: string | null = s.cookie) {
  const query = new URLSearchParams(pairs);
  return call("GET", `${AUTH}?${query}`, { headers: cookie ? { cookie } : {} });
}

const base = (s: Setup, responseType = "code"): [string, string][] => [
  ["response_type", responseType],
  ["client_id", s.client.client_id],
  ["redirect_uri", REDIRECT],
  ["scope", "readonly"],
  ["state", "st"],
];
const without = (pairs: [string, string][], name: string) => pairs.filter(([key]) => key !== name);

/** The error and state a redirect carries (query for code, fragment for implicit). */
function redirected(res: { status: number; headers: Headers }) {
  expect(res.status).toBe(302);
  const url = new URL(res.headers.get("location")!);
  const params = url.hash ? new URLSearchParams(url.hash.slice(1)) : url.searchParams;
  return { to: url.origin + url.pathname, error: params.get("error"), state: params.get("state") };
}

async function decide(s: Setup, location: string, decision: string, extra: { csrf?: string; cookie?: string } = {}) {
  const sealed = new URL(location, BASE).searchParams.get("request")!;
  const form = new URLSearchParams({ request: sealed, csrf: extra.csrf ?? consentCsrfToken(s.user.id, sealed), decision });
  return call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie: extra.cookie ?? s.cookie }, raw: form.toString() });
}

describe("repeated and empty parameters", () => {
  it.each(["scope", "response_type", "code_challenge"])("a repeated %s is invalid_request, redirected with the state", async (name) => {
    const s = await setup();
    const res = await authorize(s, [...base(s), [name, "readonly"], [name, "readonly"]]);
    expect(redirected(res)).toEqual({ to: REDIRECT, error: "invalid_request", state: "st" });
  });

  it("a repeated state is invalid_request, and no state is echoed", async () => {
    const s = await setup();
    const res = await authorize(s, [...base(s), ["state", "other"]]);
    expect(redirected(res)).toEqual({ to: REDIRECT, error: "invalid_request", state: null });
  });

  it("a repeated client_id is an unknown application, and a repeated redirect_uri an error page: never a redirect", async () => {
    const s = await setup();
    const ids = await authorize(s, [...base(s), ["client_id", s.client.client_id]]);
    expect({ status: ids.status, location: ids.headers.get("location") }).toEqual({ status: 400, location: null });
    expect(ids.text).toContain("Unknown application");
    const uris = await authorize(s, [...base(s), ["redirect_uri", REDIRECT]]);
    expect({ status: uris.status, location: uris.headers.get("location") }).toEqual({ status: 400, location: null });
    expect(uris.text).toContain("more than one redirect_uri");
  });

  it.each([
    ["scope", "invalid_request", "st"],
    ["state", "invalid_request", null],
    ["response_type", "invalid_request", "st"],
  ])("an empty %s counts as missing: %s", async (name, error, state) => {
    const s = await setup();
    const res = await authorize(s, [...without(base(s), name), [name, ""]]);
    expect(redirected(res)).toEqual({ to: REDIRECT, error, state });
  });

  it("an empty redirect_uri is missing: a code client gets the error page", async () => {
    const s = await setup();
    const res = await authorize(s, [...without(base(s), "redirect_uri"), ["redirect_uri", ""]]);
    expect(res.status).toBe(400);
    expect(res.text).toContain("no redirect_uri");
  });

  it("an unknown scope and a scope list separated by commas", async () => {
    const s = await setup();
    expect(redirected(await authorize(s, [...without(base(s), "scope"), ["scope", "readonly,admin"]]))).toEqual({ to: REDIRECT, error: "invalid_scope", state: "st" });
    const commas = await authorize(s, [...without(base(s), "scope"), ["scope", "readonly,readwrite"]]);
    expect(commas.headers.get("location")).toMatch(/^\/consent\?request=/);
  });
});

describe("PKCE parameters", () => {
  it.each([
    ["a method without a challenge", [["code_challenge_method", "S256"]]],
    ["a challenge that is not a SHA-256 digest", [["code_challenge", "x".repeat(42)], ["code_challenge_method", "S256"]]],
    ["a challenge with a character outside base64url", [["code_challenge", `${"x".repeat(42)}=`], ["code_challenge_method", "S256"]]],
    ["an unknown method", [["code_challenge", s256(VERIFIER)], ["code_challenge_method", "S512"]]],
  ])("refuses %s with invalid_request", async (_name, extra) => {
    const s = await setup();
    const res = await authorize(s, [...base(s), ...(extra as [string, string][])]);
    expect(redirected(res)).toEqual({ to: REDIRECT, error: "invalid_request", state: "st" });
  });

  it.each([
    ["42 characters", "a".repeat(42), false],
    ["43 characters", "a".repeat(43), true],
    ["128 characters", "a".repeat(128), true],
    ["129 characters", "a".repeat(129), false],
    ["a character outside the unreserved set", `${"a".repeat(42)}!`, false],
  ])("takes a code_verifier of %s only if RFC 7636 allows it, even when its digest matches", async (_name, verifier, ok) => {
    const s = await setup();
    const first = await authorize(s, [...base(s), ["code_challenge", s256(verifier)], ["code_challenge_method", "S256"]]);
    const approved = await decide(s, first.headers.get("location")!, "approve");
    const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
    const res = await call("POST", TOKEN, {
      body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: s.client.client_id, client_secret: s.client.client_secret, code_verifier: verifier },
    });
    expect(res.status).toBe(ok ? 200 : 400);
    if (!ok) expect(res.json).toEqual({ error: "invalid_grant" });
  });
});

describe("redirect URIs", () => {
  it("keeps the registered URI's own query and adds code, state and iss to it", async () => {
    const registered = "https://client.example.test/callback?tenant=7";
    const s = await setup("authorization_code", { redirectUris: [registered] });
    const first = await authorize(s, [...without(base(s), "redirect_uri"), ["redirect_uri", registered]]);
    const approved = await decide(s, first.headers.get("location")!, "approve");
    const url = new URL(approved.headers.get("location")!);
    expect([...url.searchParams.keys()]).toEqual(["tenant", "code", "state", "iss"]);
    expect(url.searchParams.get("tenant")).toBe("7");
  });

  it("sends a loopback client back to the port it asked for, and binds the code to that URI", async () => {
    const s = await setup("authorization_code", { redirectUris: ["http://127.0.0.1:8080/cb"] });
    const asked = "http://127.0.0.1:51234/cb";
    const first = await authorize(s, [...without(base(s), "redirect_uri"), ["redirect_uri", asked]]);
    const approved = await decide(s, first.headers.get("location")!, "approve");
    const url = new URL(approved.headers.get("location")!);
    expect(url.origin + url.pathname).toBe(asked);
    const code = url.searchParams.get("code")!;
    const exchange = (redirectUri: string) =>
      call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect((await exchange("http://127.0.0.1:8080/cb")).json).toEqual({ error: "invalid_grant" });
    expect((await exchange(asked)).status).toBe(200);
  });
});

describe("implicit requests", () => {
  it("accept the client's own secret, and ask for consent", async () => {
    const s = await setup("implicit");
    const res = await authorize(s, [...base(s, "token"), ["client_secret", s.client.client_secret!]]);
    expect(res.headers.get("location")).toMatch(/^\/consent\?request=/);
  });

  it("a code client asking for a token gets unauthorized_client, in the fragment it asked for", async () => {
    const s = await setup("authorization_code", { isPublic: true });
    const res = await authorize(s, base(s, "token"));
    const url = new URL(res.headers.get("location")!);
    expect(new URLSearchParams(url.hash.slice(1)).get("error")).toBe("unauthorized_client");
  });
});

describe("the consent decision", () => {
  it("remembers the union of the scopes approved, so that a later request for both is not asked again", async () => {
    const s = await setup();
    const one = await authorize(s, base(s));
    await decide(s, one.headers.get("location")!, "approve");
    const two = await authorize(s, [...without(base(s), "scope"), ["scope", "readwrite"]]);
    expect(two.headers.get("location")).toMatch(/^\/consent\?/);
    await decide(s, two.headers.get("location")!, "approve");
    const consent = await (await db()).consent.findFirstOrThrow({ where: { userId: s.user.id } });
    expect(consent.scopes).toBe("readonly readwrite");
    const both = await authorize(s, [...without(base(s), "scope"), ["scope", "readonly readwrite"]]);
    expect(new URL(both.headers.get("location")!).searchParams.get("code")).toMatch(/^[\w-]{43}$/);
  });

  it("remembers nothing on Deny: the next request asks again", async () => {
    const s = await setup();
    const first = await authorize(s, base(s));
    const denied = await decide(s, first.headers.get("location")!, "deny");
    expect(redirected({ status: 302, headers: denied.headers })).toEqual({ to: REDIRECT, error: "access_denied", state: "st" });
    expect(await (await db()).consent.count({ where: { userId: s.user.id } })).toBe(0);
    expect((await authorize(s, base(s))).headers.get("location")).toMatch(/^\/consent\?/);
  });

  it("an unknown decision is a refusal, like Deny", async () => {
    const s = await setup();
    const first = await authorize(s, base(s));
    const res = await decide(s, first.headers.get("location")!, "maybe");
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
  });

  it("an authorization request sealed more than ten minutes ago has expired: 400, and no code", async () => {
    const s = await setup();
    const first = await authorize(s, base(s));
    advanceClock(10 * 60 * 1000 + 1000);
    const res = await decide(s, first.headers.get("location")!, "approve");
    expect({ status: res.status, location: res.headers.get("location") }).toEqual({ status: 400, location: null });
    expect(res.text).toContain("Request expired");
  });

  it("a signed-out post goes to sign-in, and a form without its fields is refused", async () => {
    const s = await setup();
    const first = await authorize(s, base(s));
    const signedOut = await call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE }, raw: "decision=approve" });
    expect({ status: signedOut.status, location: signedOut.headers.get("location") }).toEqual({ status: 303, location: "/login" });
    const empty = await call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie: s.cookie }, raw: "decision=approve" });
    expect(empty.status).toBe(403);
    const wrongCsrf = await decide(s, first.headers.get("location")!, "approve", { csrf: "" });
    expect(wrongCsrf.status).toBe(403);
  });

  it("a client deleted after the request was sealed gets no code", async () => {
    const s = await setup();
    const first = await authorize(s, base(s));
    await (await import("@/clients/manage-clients")).deleteOwnClient({ ownerId: s.owner.id, clientId: s.client.client_id });
    const res = await decide(s, first.headers.get("location")!, "approve");
    expect({ status: res.status, location: res.headers.get("location") }).toEqual({ status: 400, location: null });
    expect(res.text).toContain("no longer registered");
  });
});

describe("client authentication with HTTP Basic (RFC 6749 2.3.1)", () => {
  async function owner() {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    return { user, client };
  }
  const grant = (o: Awaited<ReturnType<typeof owner>>, authorization: string, extra: Record<string, string> = {}) =>
    call("POST", TOKEN, { headers: { authorization }, body: { grant_type: "password", username: o.user.email, password: o.user.password, ...extra } });
  const basic = (id: string, secret: string) => Buffer.from(`${id}:${secret}`).toString("base64");

  it("takes the scheme in any case, and a body client_id equal to Basic's", async () => {
    const o = await owner();
    expect((await grant(o, `basic ${basic(o.client.client_id, o.client.client_secret!)}`)).status).toBe(200);
    expect((await grant(o, `BASIC ${basic(o.client.client_id, o.client.client_secret!)}`, { client_id: o.client.client_id })).status).toBe(200);
  });

  it("refuses a body client_id that differs from Basic's with invalid_request", async () => {
    const o = await owner();
    const res = await grant(o, `Basic ${basic(o.client.client_id, o.client.client_secret!)}`, { client_id: "someone-else" });
    expect({ status: res.status, body: res.json }).toEqual({ status: 400, body: { error: "invalid_request" } });
  });

  it.each([
    ["no colon", () => Buffer.from("just-an-id").toString("base64")],
    ["a broken percent-encoding", () => Buffer.from("id%zz:secret").toString("base64")],
    ["an unknown client", () => basic("unknown-client", "secret")],
  ])("answers %s with 401 invalid_client and a Basic challenge", async (_name, credentials) => {
    const o = await owner();
    const res = await grant(o, `Basic ${credentials()}`);
    expect({ status: res.status, body: res.json, challenge: res.headers.get("www-authenticate") }).toEqual({
      status: 401,
      body: { error: "invalid_client" },
      challenge: 'Basic realm="oauth"',
    });
  });

  it("refuses any secret for a public client, which has none", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id, grantType: "authorization_code", isPublic: true });
    const res = await call("POST", TOKEN, { body: { grant_type: "authorization_code", code: "x", redirect_uri: REDIRECT, client_id: client.client_id, client_secret: "anything" } });
    expect({ status: res.status, body: res.json }).toEqual({ status: 401, body: { error: "invalid_client" } });
  });
});
