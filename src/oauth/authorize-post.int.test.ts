// The authorization endpoint by POST (OpenID Connect Core 3.1.2.1, docs/rules/openid-connect.md#authorization-post)
// and request objects refused (Core 3.1.2.6, docs/rules/openid-connect.md#request-objects), against the real
// route handlers and database. A POST the session signs in is answered as the GET would be; any other is a 303
// to the GET on our origin, so that a browser whose SameSite=Lax cookie was held back from a cross-site POST
// brings it on the GET and is not taken for signed out (prompt=none included).
import { describe, expect, it } from "vitest";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";
import { s256 } from "@/oauth/pkce";

const ISS = "http://localhost:3000";
const AUTH = "/api/connect/oauth2/auth/";
const PAR = "/api/connect/oauth2/par/";
const REDIRECT = "https://client.example.test/callback";
const FORM = { "content-type": "application/x-www-form-urlencoded" };

async function setup(options: { firstParty?: boolean } = {}) {
  const owner = await makeUser();
  const user = await makeUser();
  const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", firstParty: options.firstParty ?? true });
  return { user, client, cookie: await sessionCookie(user) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

function params(s: Setup, extra: [string, string][] = []): URLSearchParams {
  return new URLSearchParams([
    ["response_type", "code"],
    ["client_id", s.client.client_id],
    ["redirect_uri", REDIRECT],
    ["scope", "openid readonly"],
    ["state", "st-post"],
    ["code_challenge", s256("v".repeat(64))],
    ["code_challenge_method", "S256"],
    ...extra,
  ]);
}

const post = (body: URLSearchParams | string, cookie: string | null, headers: Record<string, string> = FORM) =>
  call("POST", AUTH, { raw: body.toString(), headers: { ...headers, ...(cookie ? { cookie } : {}) } });
const get = (query: URLSearchParams | string, cookie: string | null) => call("GET", `${AUTH}?${query}`, { headers: cookie ? { cookie } : {} });
const location = (res: { headers: Headers }) => new URL(res.headers.get("location")!, ISS);

describe("POST to the authorization endpoint", () => {
  it("answers a signed-in POST directly, as the GET: the code comes back to the client", async () => {
    const s = await setup();
    const res = await post(params(s), s.cookie);
    expect(res.status).toBe(302);
    const back = location(res);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get("code")).toEqual(expect.any(String));
    expect(back.searchParams.get("state")).toBe("st-post");
    expect(back.searchParams.get("iss")).toBe(ISS);
    // The consent page for a client that needs it, as for GET.
    const third = await setup({ firstParty: false });
    const consent = await post(params(third), third.cookie);
    expect(consent.status).toBe(302);
    expect(location(consent).pathname).toBe("/consent");
  });

  it("answers a POST without the session 303 to the same request as a GET on our origin, which goes on with the cookie", async () => {
    const s = await setup();
    const body = params(s, [["prompt", "none"], ["nonce", "n 1+2"]]);
    const res = await post(body, null);
    expect(res.status).toBe(303);
    const target = location(res);
    expect(`${target.origin}${target.pathname}`).toBe(`${ISS}${AUTH}`);
    expect([...target.searchParams]).toEqual([...body]);
    // A browser follows with a top-level GET, which carries the SameSite=Lax cookie: the signed-in person
    // gets the code, even with prompt=none (never login_required because the POST came cross-site).
    const followed = await get(target.searchParams, s.cookie);
    expect(followed.status).toBe(302);
    expect(location(followed).searchParams.get("code")).toEqual(expect.any(String));
    // Someone really signed out: the GET's answer (the sign-in page; login_required for prompt=none).
    const signedOut = await get(target.searchParams, null);
    expect(location(signedOut).searchParams.get("error")).toBe("login_required");
    const plain = await get(location(await post(params(s), null)).searchParams, null);
    expect(location(plain).pathname).toBe("/login");
  });

  it("answers a POST signed in with a cookie that no longer signs anyone in with the 303", async () => {
    const s = await setup();
    const res = await post(params(s), "next-auth.session-token=not-a-session");
    expect(res.status).toBe(303);
  });

  it("gives a signed-in POST's errors the GET's answers: repeated, unknown client, bad redirect URI", async () => {
    const s = await setup();
    const repeated = params(s, [["state", "again"]]);
    const byPost = await post(repeated, s.cookie);
    const byGet = await get(repeated, s.cookie);
    expect(byPost.status).toBe(byGet.status);
    expect(location(byPost).searchParams.get("error")).toBe("invalid_request");
    expect(location(byGet).searchParams.get("error")).toBe("invalid_request");
    const unknown = await post(new URLSearchParams({ client_id: "nobody", response_type: "code" }), s.cookie);
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain("Unknown application");
    const twice = await post(`${params(s)}&client_id=${s.client.client_id}`, s.cookie);
    expect(twice.status).toBe(400);
    const badRedirect = params(s);
    badRedirect.set("redirect_uri", "https://evil.example.test/cb");
    expect((await post(badRedirect, s.cookie)).status).toBe(400);
  });

  it("refuses other content types (415) and bodies over 64 KiB (413), with the HTML error page", async () => {
    const s = await setup();
    const json = await post(JSON.stringify(Object.fromEntries(params(s))), s.cookie, { "content-type": "application/json" });
    expect(json.status).toBe(415);
    expect(json.headers.get("content-type")).toContain("text/html");
    expect(json.text).toContain("invalid_request");
    const big = await post(params(s, [["padding", "x".repeat(70 * 1024)]]), null);
    expect(big.status).toBe(413);
  });
});

describe("request objects", () => {
  it("answers request with a redirect carrying request_not_supported and the state, GET or POST", async () => {
    const s = await setup();
    for (const answer of [await get(params(s, [["request", "eyJhbGciOiJub25lIn0.e30."]]), s.cookie), await post(params(s, [["request", "x.y.z"]]), s.cookie)]) {
      expect(answer.status).toBe(302);
      const back = location(answer);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(back.searchParams)).toEqual({ error: "request_not_supported", state: "st-post", iss: ISS });
    }
  });

  it("answers a request_uri that is not one of our pushed requests with request_uri_not_supported and the state", async () => {
    const s = await setup();
    const res = await get(params(s, [["request_uri", "https://client.example.test/request.jwt"]]), s.cookie);
    expect(res.status).toBe(302);
    expect(Object.fromEntries(location(res).searchParams)).toEqual({ error: "request_uri_not_supported", state: "st-post", iss: ISS });
    // Ours, but unknown: the expired-request page, as before.
    const ours = await get(params(s, [["request_uri", "urn:ietf:params:oauth:request_uri:nothing-here"]]), s.cookie);
    expect(ours.status).toBe(400);
    expect(ours.text).toContain("invalid_request_uri");
  });

  it("checks client and redirect URI first; then redirects a signed-out visitor too, as prompt=none's login_required", async () => {
    const s = await setup();
    const badRedirect = params(s, [["request", "x.y.z"]]);
    badRedirect.set("redirect_uri", "https://evil.example.test/cb");
    const refused = await get(badRedirect, s.cookie);
    expect(refused.status).toBe(400);
    expect(refused.headers.get("location")).toBeNull();
    const signedOut = await get(params(s, [["request", "x.y.z"]]), null);
    expect(signedOut.status).toBe(302);
    expect(Object.fromEntries(location(signedOut).searchParams)).toMatchObject({ error: "request_not_supported", iss: ISS });
    const signedOutUri = await get(params(s, [["request_uri", "https://rp.example.test/request.jwt"]]), null);
    expect(signedOutUri.status).toBe(302);
    expect(location(signedOutUri).searchParams.get("error")).toBe("request_uri_not_supported");
  });

  it("refuses a pushed request object (400 request_not_supported) and says so in discovery", async () => {
    const s = await setup();
    const pushed = await call("POST", PAR, { raw: new URLSearchParams({ ...Object.fromEntries(params(s)), client_secret: s.client.client_secret!, request: "x.y.z" }).toString(), headers: FORM });
    expect(pushed.status).toBe(400);
    expect(pushed.json).toEqual({ error: "request_not_supported" });
    const discovery = (await call("GET", "/.well-known/openid-configuration")).json;
    expect(discovery.request_parameter_supported).toBe(false);
    expect(discovery.request_uri_parameter_supported).toBe(false);
  });
});
