// Sender-constrained tokens and resources (docs/rules/tokens.md#dpop,
// docs/rules/tokens.md#resource-indicators, docs/rules/tokens.md#protected-resource-metadata) against the real
// route handlers and database: RFC 9728 protected resource metadata and challenges, RFC 8707 resource
// indicators, and RFC 9449 DPoP at the token endpoint and on /api (bound tokens, every proof rule, replays,
// refresh-token binding of public clients, introspection, UserInfo), including a jti replayed against a second
// server process on the same database.
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { db } from "@/db/client";
import { pruneTokens } from "@/maintenance/prune-tokens";
import { digest } from "@/secrets";
import { s256 } from "@/oauth/pkce";
import { call } from "@/testing/app";
import { dpopKey, proof, unsignedProof, type DpopKey } from "@/testing/dpop";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const ISS = "http://localhost:3000";
const TOKEN = "/api/connect/oauth2/token/";
const TOKEN_URL = `${ISS}${TOKEN}`;
const RM = `resource_metadata="${ISS}/.well-known/oauth-protected-resource/api"`;
const REDIRECT = "https://client.example.test/callback";
const VERIFIER = "dpop-verifier-".padEnd(64, "v");

afterEach(() => resetClock());

async function passwordClient() {
  const user = await makeUser();
  const client = await makeClient({ ownerId: user.id });
  return { user, client };
}

type Setup = Awaited<ReturnType<typeof passwordClient>>;

const passwordBody = (s: Setup, extra: Record<string, string> = {}) => ({
  grant_type: "password",
  client_id: s.client.client_id,
  client_secret: s.client.client_secret,
  username: s.user.email,
  password: s.user.password,
  scope: "readonly readwrite openid",
  ...extra,
});

async function tokenWithProof(s: Setup, key: DpopKey) {
  const res = await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop: await proof(key, { url: TOKEN_URL }) } });
  expect(res.status).toBe(200);
  return res.json as { access_token: string; refresh_token: string; token_type: string };
}

const userPath = (s: Setup) => `/api/user/${s.user.id}/`;
const dpopGet = async (s: Setup, key: DpopKey, token: string, options: Partial<Parameters<typeof proof>[1]> = {}) =>
  call("GET", userPath(s), {
    headers: { authorization: `DPoP ${token}`, dpop: await proof(key, { method: "GET", url: `${ISS}${userPath(s)}`, accessToken: token, ...options }) },
  });

describe("RFC 9728 protected resource metadata", () => {
  it("is served for <APP_URL>/api at both well-known paths, and every /api 401 points at it with both schemes", async () => {
    const expected = {
      resource: `${ISS}/api`,
      authorization_servers: [ISS],
      scopes_supported: ["readonly", "readwrite"],
      bearer_methods_supported: ["header"],
      dpop_signing_alg_values_supported: ["ES256", "RS256"],
      dpop_bound_access_tokens_required: false,
      resource_name: "Bundle permissions API",
      resource_documentation: `${ISS}/docs`,
    };
    for (const path of ["/.well-known/oauth-protected-resource/api", "/.well-known/oauth-protected-resource"]) {
      const res = await call("GET", path);
      expect(res.status).toBe(200);
      expect(res.json).toEqual(expected);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    }
    const anonymous = await call("GET", "/api/bundle/");
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toEqual({ error: "authentication required" });
    expect(anonymous.headers.get("www-authenticate")).toBe(`Bearer realm="api", ${RM}, DPoP realm="api", algs="ES256 RS256", ${RM}`);
  });

  it("lets a browser client send DPoP (preflight) and read WWW-Authenticate", async () => {
    const preflight = await call("OPTIONS", "/api/bundle/", { headers: { origin: "https://agent.example", "access-control-request-headers": "authorization, dpop" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type, DPoP");
    const anonymous = await call("GET", "/api/bundle/", { headers: { origin: "https://agent.example" } });
    expect(anonymous.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
  });
});

describe("RFC 8707 resource indicators", () => {
  it("takes resource=<APP_URL>/api on a token request, refuses any other with invalid_target (issuing nothing), and gives every token that audience", async () => {
    const s = await passwordClient();
    const other = await call("POST", TOKEN, { body: passwordBody(s, { resource: "https://other.example/api" }) });
    expect(other.status).toBe(400);
    expect(other.json).toEqual({ error: "invalid_target" });
    const trailing = await call("POST", TOKEN, { body: passwordBody(s, { resource: `${ISS}/api/` }) });
    expect(trailing.json).toEqual({ error: "invalid_target" });
    expect(await (await db()).accessToken.count({ where: { userId: s.user.id } })).toBe(0);

    const asked = await call("POST", TOKEN, { body: passwordBody(s, { resource: `${ISS}/api` }) });
    const unasked = await call("POST", TOKEN, { body: passwordBody(s) });
    for (const res of [asked, unasked]) {
      expect(res.status).toBe(200);
      const token = (res.json as { access_token: string }).access_token;
      const introspection = await call("POST", "/api/connect/oauth2/introspect/", { body: { token, client_id: s.client.client_id, client_secret: s.client.client_secret } });
      expect(introspection.json).toMatchObject({ active: true, aud: `${ISS}/api`, token_type: "Bearer" });
      expect(introspection.json).not.toHaveProperty("cnf");
      // UserInfo accepts tokens whose audience is the API.
      const userinfo = await call("GET", "/api/connect/oauth2/userinfo/", { token });
      expect(userinfo.status).toBe(200);
      expect(userinfo.json).toEqual({ sub: String(s.user.id) });
    }
  });

  it("refuses another resource on the authorization request with a redirect carrying invalid_target", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id, grantType: "authorization_code", firstParty: true });
    const cookie = await sessionCookie(user);
    const query = (resource: string) =>
      new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "s1", resource, code_challenge: s256(VERIFIER), code_challenge_method: "S256" });
    const bad = await call("GET", `/api/connect/oauth2/auth/?${query("https://evil.example/")}`, { headers: { cookie } });
    expect(bad.status).toBe(302);
    expect(new URL(bad.headers.get("location")!).searchParams.get("error")).toBe("invalid_target");
    const good = await call("GET", `/api/connect/oauth2/auth/?${query(`${ISS}/api`)}`, { headers: { cookie } });
    expect(new URL(good.headers.get("location")!).searchParams.get("code")).toMatch(/^[\w-]{43}$/);
  });
});

describe("RFC 9449 DPoP at the token endpoint", () => {
  it("binds the access token to the proof's key: token_type DPoP, introspection cnf.jkt", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const tokens = await tokenWithProof(s, key);
    expect(tokens.token_type).toBe("DPoP");
    const introspection = await call("POST", "/api/connect/oauth2/introspect/", { body: { token: tokens.access_token, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect(introspection.json).toMatchObject({ active: true, token_type: "DPoP", cnf: { jkt: key.jkt }, aud: `${ISS}/api` });
    // A confidential client's refresh token is bound to its secret, not to the key (RFC 9449 5).
    const refresh = await (await db()).refreshToken.findUnique({ where: { digest: digest(tokens.refresh_token) } });
    expect(refresh?.jkt).toBeNull();
    const access = await (await db()).accessToken.findUnique({ where: { digest: digest(tokens.access_token) } });
    expect(access?.jkt).toBe(key.jkt);
  });

  it("accepts RS256 proofs too", async () => {
    const s = await passwordClient();
    const key = await dpopKey("RS256");
    expect((await tokenWithProof(s, key)).token_type).toBe("DPoP");
  });

  it("refuses every bad proof with 400 invalid_dpop_proof, issuing nothing", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const other = await dpopKey();
    const { privateKey: _unused, ...withPrivate } = { ...key, publicJwk: key.privateJwk };
    // Each proof is made just before its request, its iat from the clock at that moment (rounded away from
    // now): made all at once up front, "from the future (61 s)" was inside the window by the time a slow run
    // (Stryker's) reached it.
    const at = (offset: number) => (offset < 0 ? Math.floor : Math.ceil)(nowMs() / 1000) + offset;
    const bad: Record<string, () => Promise<string> | string> = {
      "typ not dpop+jwt": () => proof(key, { url: TOKEN_URL, header: { typ: "JWT" } }),
      "alg none": () => unsignedProof(key, TOKEN_URL),
      "a private key in jwk": () => proof({ ...withPrivate, privateKey: key.privateKey }, { url: TOKEN_URL }),
      "signed with another key than jwk": () => proof(key, { url: TOKEN_URL, signWith: other }),
      "too old (61 s)": () => proof(key, { url: TOKEN_URL, claims: { iat: at(-61) } }),
      "from the future (61 s)": () => proof(key, { url: TOKEN_URL, claims: { iat: at(61) } }),
      "for another URL": () => proof(key, { url: `${ISS}/api/connect/oauth2/revoke/` }),
      "for another origin": () => proof(key, { url: `https://evil.example${TOKEN}` }),
      "for another method": () => proof(key, { url: TOKEN_URL, method: "GET" }),
      "without jti": () => proof(key, { url: TOKEN_URL, claims: { jti: undefined } }),
      "not a JWS": () => "not-a-proof",
    };
    for (const [name, make] of Object.entries(bad)) {
      const res = await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop: await make() } });
      expect({ name, status: res.status, body: res.json }).toEqual({ name, status: 400, body: { error: "invalid_dpop_proof" } });
    }
    // Two DPoP headers arrive joined by a comma.
    const twice = await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop: `${await proof(key, { url: TOKEN_URL })}, ${await proof(key, { url: TOKEN_URL })}` } });
    expect(twice.json).toEqual({ error: "invalid_dpop_proof" });
    expect(await (await db()).accessToken.count({ where: { userId: s.user.id } })).toBe(0);
  });

  it("accepts the htu with a query or fragment left out and the host in another case, within 60 s either way", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const now = Math.floor(nowMs() / 1000);
    for (const dpop of [
      await proof(key, { url: "HTTP://LOCALHOST:3000/api/connect/oauth2/token/" }),
      await proof(key, { url: `${TOKEN_URL}?x=1#frag` }),
      await proof(key, { url: TOKEN_URL, claims: { iat: now - 55 } }),
      await proof(key, { url: TOKEN_URL, claims: { iat: now + 55 } }),
    ]) {
      const res = await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop } });
      expect(res.status).toBe(200);
    }
  });

  it("refuses a replayed proof with invalid_dpop_proof", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const dpop = await proof(key, { url: TOKEN_URL });
    expect((await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop } })).status).toBe(200);
    const replay = await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop } });
    expect(replay.status).toBe(400);
    expect(replay.json).toEqual({ error: "invalid_dpop_proof" });
  });
});

describe("RFC 9449 DPoP on /api", () => {
  it("serves a bound token sent as DPoP with a proof carrying ath", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const { access_token } = await tokenWithProof(s, key);
    const res = await dpopGet(s, key, access_token);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: s.user.id, email: s.user.email });
    const userinfo = await call("GET", "/api/connect/oauth2/userinfo/", {
      headers: { authorization: `DPoP ${access_token}`, dpop: await proof(key, { method: "GET", url: `${ISS}/api/connect/oauth2/userinfo/`, accessToken: access_token }) },
    });
    expect(userinfo.status).toBe(200);
    expect(userinfo.json).toEqual({ sub: String(s.user.id) });
  });

  it("refuses a bound token sent as Bearer: 401 with DPoP error=invalid_token", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const { access_token } = await tokenWithProof(s, key);
    const res = await call("GET", userPath(s), { token: access_token });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: "this token is DPoP-bound: send it as DPoP with a proof" });
    expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="api", ${RM}, DPoP realm="api", algs="ES256 RS256", ${RM}, error="invalid_token"`);
    const userinfo = await call("GET", "/api/connect/oauth2/userinfo/", { token: access_token });
    expect(userinfo.status).toBe(401);
    expect(userinfo.json).toEqual({ error: "invalid_token" });
  });

  it("refuses a missing, wrong, replayed or mismatched proof: 401 with DPoP error=invalid_dpop_proof", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const thief = await dpopKey();
    const { access_token } = await tokenWithProof(s, key);
    const url = `${ISS}${userPath(s)}`;
    const replayed = await proof(key, { method: "GET", url, accessToken: access_token });
    expect((await call("GET", userPath(s), { headers: { authorization: `DPoP ${access_token}`, dpop: replayed } })).status).toBe(200);
    const cases: Record<string, Record<string, string>> = {
      "no proof": { authorization: `DPoP ${access_token}` },
      "no ath": { authorization: `DPoP ${access_token}`, dpop: await proof(key, { method: "GET", url }) },
      "ath of another token": { authorization: `DPoP ${access_token}`, dpop: await proof(key, { method: "GET", url, accessToken: "another-token" }) },
      "a thief's key": { authorization: `DPoP ${access_token}`, dpop: await proof(thief, { method: "GET", url, accessToken: access_token }) },
      "another method": { authorization: `DPoP ${access_token}`, dpop: await proof(key, { method: "POST", url, accessToken: access_token }) },
      "another path": { authorization: `DPoP ${access_token}`, dpop: await proof(key, { method: "GET", url: `${ISS}/api/bundle/`, accessToken: access_token }) },
      replayed: { authorization: `DPoP ${access_token}`, dpop: replayed },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const res = await call("GET", userPath(s), { headers });
      expect({ name, status: res.status, challenge: res.headers.get("www-authenticate") }).toEqual({
        name,
        status: 401,
        challenge: `Bearer realm="api", ${RM}, DPoP realm="api", algs="ES256 RS256", ${RM}, error="invalid_dpop_proof"`,
      });
      expect(res.json?.error).toMatch(/DPoP proof/);
    }
  });

  it("refuses an unbound token sent as DPoP with invalid_token", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const res = await call("POST", TOKEN, { body: passwordBody(s) });
    const token = (res.json as { access_token: string }).access_token;
    const asDpop = await dpopGet(s, key, token);
    expect(asDpop.status).toBe(401);
    expect(asDpop.headers.get("www-authenticate")).toBe(`Bearer realm="api", ${RM}, DPoP realm="api", algs="ES256 RS256", ${RM}, error="invalid_token"`);
    expect((await call("GET", userPath(s), { token })).status).toBe(200);
  });

  it("checks iat against the clock: a proof made 61 s ago is refused", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const { access_token } = await tokenWithProof(s, key);
    const stale = await proof(key, { method: "GET", url: `${ISS}${userPath(s)}`, accessToken: access_token });
    advanceClock(61_000);
    const res = await call("GET", userPath(s), { headers: { authorization: `DPoP ${access_token}`, dpop: stale } });
    expect(res.status).toBe(401);
  });

  it("keeps a proof's jti until its iat is out of the window; tokens:prune removes it then", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const dpop = await proof(key, { url: TOKEN_URL });
    expect((await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop } })).status).toBe(200);
    const stored = await (await db()).dpopProof.findMany({ where: { expiresAt: { gt: new Date(nowMs()) } } });
    expect(stored.length).toBeGreaterThan(0);
    await pruneTokens(); // before the window closes: kept, so the replay below is still refused
    expect((await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop } })).json).toEqual({ error: "invalid_dpop_proof" });
    advanceClock(121_000);
    expect((await pruneTokens()).dpop_proofs).toBeGreaterThanOrEqual(stored.length);
    expect(await (await db()).dpopProof.count({ where: { id: { in: stored.map((row) => row.id) } } })).toBe(0);
  });

  it("keeps the jti of a proof dated ahead (iat in the future, within the 60 s) until that proof's own window ends: tokens:prune in between leaves it, so a replay is still refused", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const ahead = Math.floor(nowMs() / 1000) + 50; // acceptable until 110 s from now
    const dpop = await proof(key, { url: TOKEN_URL, claims: { iat: ahead } });
    expect((await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop } })).status).toBe(200);
    advanceClock(90_000); // 40 s past the proof's iat: the proof itself still passes the iat check
    await pruneTokens();
    const replay = await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop } });
    expect(replay.status).toBe(400);
    expect(replay.json).toEqual({ error: "invalid_dpop_proof" });
    advanceClock(21_000); // past iat + 60 s: refused by iat alone, and the row may go
    const late = await call("POST", TOKEN, { body: passwordBody(s), headers: { dpop } });
    expect(late.json).toEqual({ error: "invalid_dpop_proof" });
  });
});

describe("RFC 9449 5: refresh tokens", () => {
  async function publicCodeTokens(key: DpopKey) {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id, grantType: "authorization_code", isPublic: true, firstParty: true });
    const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256(VERIFIER), code_challenge_method: "S256" });
    const auth = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie: await sessionCookie(user) } });
    const code = new URL(auth.headers.get("location")!).searchParams.get("code")!;
    const res = await call("POST", TOKEN, {
      body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: client.client_id },
      headers: { dpop: await proof(key, { url: TOKEN_URL }) },
    });
    expect(res.status).toBe(200);
    return { client, tokens: res.json as { access_token: string; refresh_token: string; token_type: string } };
  }

  it("binds a public client's refresh token: refused (and not consumed) without a proof of that key, rotated with one", async () => {
    const key = await dpopKey();
    const { client, tokens } = await publicCodeTokens(key);
    expect(tokens.token_type).toBe("DPoP");
    const refresh = (headers: Record<string, string>) => call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id }, headers });
    const bare = await refresh({});
    expect(bare.status).toBe(400);
    expect(bare.json).toEqual({ error: "invalid_grant" });
    const stolen = await refresh({ dpop: await proof(await dpopKey(), { url: TOKEN_URL }) });
    expect(stolen.json).toEqual({ error: "invalid_grant" });
    const own = await refresh({ dpop: await proof(key, { url: TOKEN_URL }) });
    expect(own.status).toBe(200);
    expect(own.json).toMatchObject({ token_type: "DPoP" });
    const next = await (await db()).refreshToken.findUnique({ where: { digest: digest((own.json as { refresh_token: string }).refresh_token) } });
    expect(next?.jkt).toBe(key.jkt);
  });

  it("does not bind a confidential client's refresh token; the new access token is bound to the refresh's proof, if any", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const first = await tokenWithProof(s, key);
    const plain = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect(plain.status).toBe(200);
    expect(plain.json).toMatchObject({ token_type: "Bearer" });
    const second = plain.json as { refresh_token: string };
    const bound = await call("POST", TOKEN, {
      body: { grant_type: "refresh_token", refresh_token: second.refresh_token, client_id: s.client.client_id, client_secret: s.client.client_secret },
      headers: { dpop: await proof(key, { url: TOKEN_URL }) },
    });
    expect(bound.json).toMatchObject({ token_type: "DPoP" });
  });
});

describe("DPoP replay across instances", () => {
  let second: ChildProcess | null = null;
  afterAll(() => {
    second?.kill("SIGTERM");
  });

  it("refuses on a second server process a proof already used on this one (the jti row is shared through the database)", async () => {
    const s = await passwordClient();
    const key = await dpopKey();
    const { access_token } = await tokenWithProof(s, key);
    second = spawn("node_modules/.bin/tsx", ["src/testing/second-instance.ts"], { env: process.env, stdio: ["pipe", "pipe", "inherit"] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      second!.stdout!.on("data", (chunk) => {
        out += chunk;
        const match = /listening (\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      second!.on("exit", (code) => reject(new Error(`second instance exited ${code}`)));
    });
    const dpop = await proof(key, { method: "GET", url: `${ISS}${userPath(s)}`, accessToken: access_token });
    const headers = { authorization: `DPoP ${access_token}`, dpop };
    const here = await call("GET", userPath(s), { headers });
    expect(here.status).toBe(200);
    const there = await fetch(`${url}${userPath(s)}`, { headers });
    expect(there.status).toBe(401);
    expect(there.headers.get("www-authenticate")).toContain('error="invalid_dpop_proof"');
    // The second instance serves a fresh proof: it refused the replay, not the token.
    const fresh = await fetch(`${url}${userPath(s)}`, { headers: { ...headers, dpop: await proof(key, { method: "GET", url: `${ISS}${userPath(s)}`, accessToken: access_token }) } });
    expect(fresh.status).toBe(200);
  });
});
