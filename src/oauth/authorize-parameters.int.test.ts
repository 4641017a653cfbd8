// The authorization endpoint's checks of a request (src/oauth/authorize.ts;
// docs/rules/tokens.md#authorization-endpoint, docs/rules/tokens.md#authorization-errors,
// docs/rules/openid-connect.md#authorization-parameters, docs/rules/tokens.md#pushed-authorization-requests;
// RFC 6749 3.1, 4.1.1, 4.2.1, 10.2; RFC 9126 4): parameters given empty are absent, none may be repeated (also
// those this response type does not use), whole seconds, the nonce's length, a registered scope bounds the
// request, the response type follows the client's grant, errors of an implicit request go in the fragment, the
// implicit grant's tokens (no refresh token; audited and counted as implicit), public clients asked every
// time, and the HTML pages that answer instead of a redirect.
import { describe, expect, it } from "vitest";
import { now } from "@/clock";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { s256 } from "@/oauth/pkce";
import { db, write } from "@/db/client";
import { metrics } from "@/observability/metrics";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const AUTH = "/api/connect/oauth2/auth/";
const PAR = "/api/connect/oauth2/par/";
const REDIRECT = "https://client.example.test/callback";
const ISS = "http://localhost:3000";
const VERIFIER = "verifier-".padEnd(64, "p");

type GrantType = "authorization_code" | "implicit" | "password" | "client_credentials";

/** A signed-in person and a client; first-party unless asked otherwise (no consent page in the way). */
async function setup(grantType: GrantType = "authorization_code", extra: { isPublic?: boolean; firstParty?: boolean } = {}) {
  const user = await makeUser();
  const redirectUris = grantType === "client_credentials" ? [] : [REDIRECT];
  const client = await makeClient({ ownerId: user.id, grantType, redirectUris, firstParty: true, ...extra });
  return { user, client, cookie: await sessionCookie(user) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

function authorizeUrl(s: Setup, params: Record<string, string> = {}, extra = "") {
  const responseType = s.client.grant_type === "implicit" ? "token" : "code";
  return `${AUTH}?${new URLSearchParams({ response_type: responseType, client_id: s.client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "st-p", ...params })}${extra}`;
}

const get = (path: string, cookie: string | null) => call("GET", path, { headers: cookie ? { cookie } : {} });

/** The redirect to the client: its parameters, from the query or (implicit) the fragment. */
function clientRedirect(res: { status: number; headers: Headers }, mode: "query" | "fragment" = "query") {
  expect(res.status).toBe(302);
  const location = res.headers.get("location")!;
  const url = new URL(location);
  expect(url.origin + url.pathname).toBe(REDIRECT);
  if (mode === "fragment") {
    expect(url.search).toBe("");
    return Object.fromEntries(new URLSearchParams(url.hash.slice(1)));
  }
  expect(url.hash).toBe("");
  return Object.fromEntries(url.searchParams);
}

const refused = (error: string) => ({ error, state: "st-p", iss: ISS });

/** The HTML error page: its title and the facts for developers. */
function errorPage(res: { status: number; headers: Headers; text: string }) {
  expect(res.status).toBe(400);
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  const title = /<h1>([^<]*)<\/h1>/.exec(res.text)?.[1];
  const facts = Object.fromEntries([...res.text.matchAll(/<dt>([^<]*)<\/dt><dd>([^<]*)<\/dd>/g)].map((m) => [m[1], m[2]]));
  return { title, facts };
}

describe("the request's parameters", () => {
  it("treats a parameter given empty as absent (an empty max_age asks for nothing)", async () => {
    const s = await setup();
    const params = clientRedirect(await get(authorizeUrl(s, { max_age: "" }), s.cookie));
    expect(params.code).toMatch(/^[\w-]{43}$/);
  });

  it.each([
    ["client_secret in a code request", "authorization_code", "&client_secret=a&client_secret=b"],
    ["code_challenge in an implicit request", "implicit", `&code_challenge=${s256(VERIFIER)}&code_challenge=${s256(VERIFIER)}`],
    ["code_challenge_method in an implicit request", "implicit", "&code_challenge_method=S256&code_challenge_method=S256"],
  ] as const)("refuses a repeated parameter (RFC 6749 3.1), even one this response type does not use: %s", async (_name, grantType, extra) => {
    const s = await setup(grantType);
    const res = await get(authorizeUrl(s, {}, extra), s.cookie);
    expect(clientRedirect(res, grantType === "implicit" ? "fragment" : "query")).toEqual(refused("invalid_request"));
  });

  it.each([["5x"], ["12345678901"], ["1.5"]])("refuses max_age=%s: a whole number of seconds, at most ten digits", async (maxAge) => {
    const s = await setup();
    expect(clientRedirect(await get(authorizeUrl(s, { max_age: maxAge }), s.cookie))).toEqual(refused("invalid_request"));
  });

  it("takes a nonce of 500 characters and refuses one of 501", async () => {
    const s = await setup();
    expect(clientRedirect(await get(authorizeUrl(s, { scope: "openid", nonce: "n".repeat(500) }), s.cookie)).code).toMatch(/^[\w-]{43}$/);
    expect(clientRedirect(await get(authorizeUrl(s, { scope: "openid", nonce: "n".repeat(501) }), s.cookie))).toEqual(refused("invalid_request"));
  });

  it("bounds the request by the client's registered scope: within it goes on, beyond it is invalid_scope", async () => {
    const s = await setup();
    await write((tx) => tx.client.update({ where: { clientId: s.client.client_id }, data: { scope: "readonly" } }));
    expect(clientRedirect(await get(authorizeUrl(s, { scope: "readonly" }), s.cookie)).code).toMatch(/^[\w-]{43}$/);
    expect(clientRedirect(await get(authorizeUrl(s, { scope: "readonly readwrite" }), s.cookie))).toEqual(refused("invalid_scope"));
  });

  it("gives a token only to an implicit client: a password client asking response_type=token is unauthorized_client", async () => {
    const s = await setup("password");
    const res = await get(authorizeUrl(s, { response_type: "token" }), s.cookie);
    expect(clientRedirect(res, "fragment")).toEqual(refused("unauthorized_client"));
    const code = await get(authorizeUrl(s, { response_type: "code" }), s.cookie);
    expect(clientRedirect(code)).toEqual(refused("unauthorized_client"));
  });

  it("sends an implicit request's error in the fragment, never the query", async () => {
    const s = await setup("implicit");
    const res = await get(authorizeUrl(s, { scope: "" }), s.cookie);
    expect(clientRedirect(res, "fragment")).toEqual(refused("invalid_request"));
  });
});

describe("the implicit grant", () => {
  async function approve(s: Setup, location: string) {
    const sealed = new URL(location, ISS).searchParams.get("request")!;
    const form = new URLSearchParams({ request: sealed, csrf: consentCsrfToken(s.user.id, sealed), decision: "approve" });
    return call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie: s.cookie }, raw: form.toString() });
  }
  const implicitIssued = async () => (await metrics().tokensIssued.get()).values.find((v) => v.labels.grant_type === "implicit")?.value ?? 0;

  it("issues an access token and never a refresh token, audited and counted as the implicit grant", async () => {
    const s = await setup("implicit", { firstParty: false });
    const before = await implicitIssued();
    const asked = await get(authorizeUrl(s), s.cookie);
    expect(asked.status).toBe(302);
    expect(asked.headers.get("location")).toMatch(/^\/consent\?request=/);
    const done = await approve(s, asked.headers.get("location")!);
    expect(done.status).toBe(303);
    const params = Object.fromEntries(new URLSearchParams(new URL(done.headers.get("location")!).hash.slice(1)));
    expect(params).toEqual({ access_token: expect.stringMatching(/^[\w-]{43}$/), token_type: "Bearer", expires_in: expect.stringMatching(/^\d+$/), scope: "readonly", state: "st-p", iss: ISS });

    const client = (await (await db()).client.findUnique({ where: { clientId: s.client.client_id } }))!;
    const grants = await (await db()).grant.findMany({ where: { clientId: client.id }, include: { accessTokens: true, refreshTokens: true } });
    expect(grants.map((g) => [g.grantType, g.accessTokens.length, g.refreshTokens.length])).toEqual([["implicit", 1, 0]]);
    const events = await (await db()).auditEvent.findMany({ where: { type: "token.issued", clientId: s.client.client_id } });
    expect(events.map((e) => JSON.parse(e.detail!))).toEqual([{ grant_type: "implicit", scope: "readonly" }]);
    expect(await implicitIssued()).toBe(before + 1);
  });

  it("asks a public client's user every time, even with a consent row on record (RFC 6749 10.2)", async () => {
    const s = await setup("authorization_code", { isPublic: true, firstParty: false });
    const client = (await (await db()).client.findUnique({ where: { clientId: s.client.client_id } }))!;
    const at = now();
    await write((tx) => tx.consent.create({ data: { userId: s.user.id, clientId: client.id, scopes: "readonly", createdAt: at, updatedAt: at } }));
    const res = await get(authorizeUrl(s, { code_challenge: s256(VERIFIER), code_challenge_method: "S256" }), s.cookie);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(/^\/consent\?request=/);
  });
});

describe("the pages that answer instead of a redirect", () => {
  it("names a missing client_id as (missing) on the unknown-application page", async () => {
    const res = await get(`${AUTH}?response_type=code&redirect_uri=${encodeURIComponent(REDIRECT)}`, null);
    expect(errorPage(res)).toEqual({ title: "Unknown application", facts: { Error: "invalid_client", client_id: "(missing)" } });
  });

  it("answers a signed-out visitor's invalid request with the invalid-request page, naming the error", async () => {
    const s = await setup();
    const res = await get(authorizeUrl(s, { response_type: "none" }), null);
    expect(errorPage(res)).toEqual({ title: "Invalid sign-in request", facts: { Error: "unsupported_response_type", client_id: s.client.client_id } });
  });

  it("answers more than one request_uri, even with a live one among them, with the expired-request page", async () => {
    const s = await setup();
    const body = new URLSearchParams({ response_type: "code", client_id: s.client.client_id, client_secret: s.client.client_secret!, redirect_uri: REDIRECT, scope: "readonly", state: "st-p" });
    const pushed = await call("POST", PAR, { raw: body.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(pushed.status).toBe(201);
    const requestUri = encodeURIComponent(String(pushed.json.request_uri));
    const res = await get(`${AUTH}?client_id=${s.client.client_id}&request_uri=${requestUri}&request_uri=${requestUri}`, s.cookie);
    expect(errorPage(res)).toEqual({ title: "Sign-in request expired", facts: { Error: "invalid_request_uri" } });
  });
});
