// RFC 9126 pushed authorization requests (docs/rules/tokens.md#pushed-authorization-requests) against the real
// route handlers and database: the push (client authentication, validation as at the authorization endpoint,
// 201), the authorization endpoint taking client_id and request_uri only, single use (also when uses race), 60
// seconds, another client's request_uri, the way through sign-in, and clients that require PAR.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { s256 } from "@/oauth/pkce";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { runCli } from "@/testing/cli";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const ISS = "http://localhost:3000";
const PAR = "/api/connect/oauth2/par/";
const AUTH = "/api/connect/oauth2/auth/";
const REDIRECT = "https://client.example.test/callback";
const VERIFIER = "par-verifier-".padEnd(64, "v");

afterEach(() => resetClock());

async function setup(options: { isPublic?: boolean; requirePar?: boolean } = {}) {
  const user = await makeUser();
  const client = await makeClient({ ownerId: user.id, grantType: "authorization_code", isPublic: options.isPublic ?? false, firstParty: true, requirePar: options.requirePar ?? false });
  return { user, client, cookie: await sessionCookie(user) };
}
type Setup = Awaited<ReturnType<typeof setup>>;

const pushed = (s: Setup, extra: Record<string, string> = {}) => ({
  response_type: "code",
  client_id: s.client.client_id,
  ...(s.client.client_secret ? { client_secret: s.client.client_secret } : {}),
  redirect_uri: REDIRECT,
  scope: "readonly",
  state: "par-state",
  code_challenge: s256(VERIFIER),
  code_challenge_method: "S256",
  ...extra,
});

const push = (body: Record<string, string>) =>
  call("POST", PAR, { raw: new URLSearchParams(body).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

const authorizeWith = (s: Setup, requestUri: string, cookie: string | null = s.cookie, extra = "") =>
  call("GET", `${AUTH}?client_id=${encodeURIComponent(s.client.client_id)}&request_uri=${encodeURIComponent(requestUri)}${extra}`, { headers: cookie ? { cookie } : {} });

describe("RFC 9126 pushed authorization requests", () => {
  it("answers 201 with a request_uri valid 60 s, which the authorization endpoint uses once", async () => {
    const s = await setup();
    const res = await push(pushed(s));
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:[\w-]{43}$/), expires_in: 60 });
    expect(res.headers.get("cache-control")).toBe("no-store");
    const requestUri = (res.json as { request_uri: string }).request_uri;

    // Other query parameters are ignored: the pushed ones decide.
    const first = await authorizeWith(s, requestUri, s.cookie, "&state=forged&redirect_uri=https%3A%2F%2Fevil.example%2F");
    expect(first.status).toBe(302);
    const location = new URL(first.headers.get("location")!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get("state")).toBe("par-state");
    const code = location.searchParams.get("code")!;
    const tokens = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: s.client.client_id, client_secret: s.client.client_secret },
    });
    expect(tokens.status).toBe(200);

    const again = await authorizeWith(s, requestUri);
    expect(again.status).toBe(400);
    expect(again.headers.get("content-type")).toContain("text/html");
    expect(again.text).toContain("invalid_request_uri");
  });

  it("expires after 60 s, and belongs to the client that pushed it", async () => {
    const s = await setup();
    const other = await setup();
    const requestUri = ((await push(pushed(s))).json as { request_uri: string }).request_uri;
    expect((await authorizeWith(other, requestUri, other.cookie)).status).toBe(400);
    advanceClock(61_000);
    expect((await authorizeWith(s, requestUri)).status).toBe(400);
    expect((await authorizeWith(s, "urn:ietf:params:oauth:request_uri:unknown")).status).toBe(400);
  });

  it("gives one code when uses of a request_uri race", async () => {
    const s = await setup();
    const requestUri = ((await push(pushed(s))).json as { request_uri: string }).request_uri;
    const results = await Promise.all(Array.from({ length: 6 }, () => authorizeWith(s, requestUri)));
    expect(results.map((r) => r.status).sort()).toEqual([302, 400, 400, 400, 400, 400]);
  });

  it("is not spent by the way through the sign-in page", async () => {
    const s = await setup();
    const requestUri = ((await push(pushed(s))).json as { request_uri: string }).request_uri;
    const signedOut = await authorizeWith(s, requestUri, null);
    expect(signedOut.status).toBe(302);
    const login = new URL(signedOut.headers.get("location")!, ISS);
    expect(login.pathname).toBe("/login");
    const back = login.searchParams.get("callbackUrl")!;
    expect(new URL(back, ISS).searchParams.get("request_uri")).toBe(requestUri);
    const after = await call("GET", back, { headers: { cookie: s.cookie } });
    expect(new URL(after.headers.get("location")!).searchParams.get("code")).toMatch(/^[\w-]{43}$/);
  });

  it("validates the pushed request as the authorization endpoint would, and authenticates the client", async () => {
    const s = await setup();
    const publicClient = await setup({ isPublic: true });
    const cases: Array<[Record<string, string>, number, string]> = [
      [pushed(s, { redirect_uri: "https://evil.example/cb" }), 400, "invalid_request"],
      [pushed(s, { resource: "https://evil.example/" }), 400, "invalid_target"],
      [pushed(s, { scope: "admin" }), 400, "invalid_scope"],
      [pushed(s, { response_type: "token" }), 400, "unauthorized_client"],
      [pushed(s, { state: "" }), 400, "invalid_request"],
      [pushed(s, { code_challenge_method: "plain" }), 400, "invalid_request"],
      [pushed(s, { request_uri: "urn:ietf:params:oauth:request_uri:x" }), 400, "invalid_request"],
      [pushed(s, { client_secret: "wrong" }), 401, "invalid_client"],
      [{ ...pushed(publicClient), code_challenge: "", code_challenge_method: "" }, 400, "invalid_request"],
    ];
    for (const [body, status, error] of cases) {
      const res = await push(body);
      expect({ body, status: res.status, json: res.json }).toEqual({ body, status, json: { error } });
    }
    const row = await (await db()).client.findUnique({ where: { clientId: s.client.client_id } });
    expect(await (await db()).pushedAuthorizationRequest.count({ where: { clientId: row!.id } })).toBe(0);
    const ok = await push({ ...pushed(publicClient), resource: `${ISS}/api` });
    expect(ok.status).toBe(201);
  });

  it("makes a client that requires PAR (CLI --require-par) refuse plain authorization requests", async () => {
    const owner = await makeUser();
    const run = await runCli("client:create", "--owner", owner.email, "--name", "FAPI app", "--grant", "authorization_code", "--redirect-uri", REDIRECT, "--require-par", "--first-party", "--json");
    expect(run.code).toBe(0);
    const created = JSON.parse(run.stdout) as { client_id: string; client_secret: string; require_pushed_authorization_requests: boolean };
    expect(created.require_pushed_authorization_requests).toBe(true);
    const s = { user: owner, client: { ...created, grant_type: "authorization_code" }, cookie: await sessionCookie(owner) } as unknown as Setup;
    const plain = new URLSearchParams({ response_type: "code", client_id: created.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "x", code_challenge: s256(VERIFIER), code_challenge_method: "S256" });
    const refused = await call("GET", `${AUTH}?${plain}`, { headers: { cookie: s.cookie } });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("invalid_request");
    const requestUri = ((await push(pushed(s))).json as { request_uri: string }).request_uri;
    const viaPar = await authorizeWith(s, requestUri);
    expect(new URL(viaPar.headers.get("location")!).searchParams.get("code")).toMatch(/^[\w-]{43}$/);
  });
});
