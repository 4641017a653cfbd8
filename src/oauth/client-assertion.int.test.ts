// Client authentication with a signed JWT (RFC 7523 2.2 and 3, private_key_jwt;
// docs/rules/tokens.md#client-assertions, docs/rules/tokens.md#client-keys) against the real route handlers and
// database: an assertion that works at the token, PAR, revocation, introspection and device endpoints; every
// refusal (replayed, two at once, expired, exp too far ahead, wrong aud, wrong iss/sub, HS256, another key, a
// client without keys, a jti empty, not a string or over 256 characters, an iat after exp, an assertion over 8,000
// characters), and the limits themselves taken; a private_key_jwt client's secret-less ways refused; the keys
// through registration and the CLI; the jti rows pruned.
import { randomUUID } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { setEnvForTests, type Env } from "@/env";
import { db } from "@/db/client";
import { digest } from "@/secrets";
import { pruneTokens } from "@/maintenance/prune-tokens";
import { s256 } from "@/oauth/pkce";
import { call } from "@/testing/app";
import { runCli } from "@/testing/cli";
import { makeClient, makeUser } from "@/testing/factories";
import { Barrier, together } from "@/testing/race";

const ISS = "http://localhost:3000";
const TOKEN = "/api/connect/oauth2/token/";
const PAR = "/api/connect/oauth2/par/";
const REVOKE = "/api/connect/oauth2/revoke/";
const INTROSPECT = "/api/connect/oauth2/introspect/";
const DEVICE = "/api/connect/oauth2/device/";
const TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const REDIRECT = "https://client.example.test/callback";

afterEach(() => resetClock());

type Key = { privateKey: CryptoKey; jwk: JWK; alg: "RS256" | "ES256" };

async function keyPair(alg: "RS256" | "ES256", kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid }, alg };
}

const rsa = keyPair("RS256", "rsa-1");
const ec = keyPair("ES256", "ec-1");
const other = keyPair("RS256", "rsa-1"); // the same kid, another key

async function keyedClient(grantType: "client_credentials" | "authorization_code" | "device_code" = "client_credentials") {
  const owner = await makeUser();
  const client = await makeClient({ ownerId: owner.id, grantType, jwks: { keys: [(await rsa).jwk, (await ec).jwk] }, ...(grantType === "client_credentials" || grantType === "device_code" ? { redirectUris: [] } : {}) });
  return { owner, client };
}

type Claims = Record<string, unknown>;

/** An assertion for `clientId` at `audience`, with `claims` changed; signed by `key` (RS256 by default). */
async function assertion(clientId: string, options: { claims?: Claims; key?: Key; audience?: string | string[] } = {}) {
  const key = options.key ?? (await rsa);
  const seconds = Math.floor(nowMs() / 1000);
  const claims: Claims = { iss: clientId, sub: clientId, aud: options.audience ?? ISS, jti: randomUUID(), iat: seconds, exp: seconds + 60, ...options.claims };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.jwk.kid }).sign(key.privateKey);
}

const form = (params: Record<string, string>) => ({ raw: new URLSearchParams(params).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

const tokenWith = (jwt: string, extra: Record<string, string> = {}) =>
  call("POST", TOKEN, form({ grant_type: "client_credentials", client_assertion_type: TYPE, client_assertion: jwt, ...extra }));

describe("client assertions at the token endpoint", () => {
  it("authenticates a client by an RS256 or an ES256 assertion with aud the issuer or the endpoint's URL", async () => {
    const { client } = await keyedClient();
    expect(client.client_secret).toBeNull();
    const rs = await tokenWith(await assertion(client.client_id));
    expect(rs.status).toBe(200);
    expect(rs.json.token_type).toBe("Bearer");
    expect((await tokenWith(await assertion(client.client_id, { key: await ec }))).status).toBe(200);
    expect((await tokenWith(await assertion(client.client_id, { audience: `${ISS}${TOKEN}` }))).status).toBe(200);
    // client_id in the body too, when it names the same client.
    expect((await tokenWith(await assertion(client.client_id), { client_id: client.client_id })).status).toBe(200);
  });

  it("refuses a replayed assertion: its jti is used once", async () => {
    const { client } = await keyedClient();
    const jwt = await assertion(client.client_id);
    expect((await tokenWith(jwt)).status).toBe(200);
    const again = await tokenWith(jwt);
    expect(again.status).toBe(401);
    expect(again.json).toEqual({ error: "invalid_client" });
  });

  it("lets exactly one of two identical assertions sent at once through", async () => {
    const { client } = await keyedClient();
    const body = new URLSearchParams({ grant_type: "client_credentials", client_assertion_type: TYPE, client_assertion: await assertion(client.client_id) }).toString();
    const barrier = new Barrier(2);
    const send = () => call("POST", TOKEN, { raw: body, heldBy: barrier, headers: { "content-type": "application/x-www-form-urlencoded" } });
    const answers = await together(barrier, [send(), send()]);
    expect(barrier.arrived).toBe(2);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
  });

  it("refuses an expired assertion, and one whose exp is more than 5 minutes ahead", async () => {
    const { client } = await keyedClient();
    const seconds = Math.floor(nowMs() / 1000);
    const expired = await assertion(client.client_id, { claims: { iat: seconds - 120, exp: seconds - 1 } });
    expect((await tokenWith(expired)).status).toBe(401);
    const late = await assertion(client.client_id, { claims: { exp: seconds + 60 } });
    advanceClock(61_000);
    expect((await tokenWith(late)).status).toBe(401);
    resetClock();
    // Well past the 300 seconds and well within them, whatever time the requests before took.
    const later = Math.floor(nowMs() / 1000);
    expect((await tokenWith(await assertion(client.client_id, { claims: { exp: later + 330 } }))).status).toBe(401);
    expect((await tokenWith(await assertion(client.client_id, { claims: { exp: later + 270 } }))).status).toBe(200);
    expect((await tokenWith(await assertion(client.client_id, { claims: { exp: undefined } }))).status).toBe(401);
  });

  it("refuses an iat in the future, and an assertion without jti", async () => {
    const { client } = await keyedClient();
    const seconds = Math.floor(nowMs() / 1000);
    expect((await tokenWith(await assertion(client.client_id, { claims: { iat: seconds + 120, exp: seconds + 200 } }))).status).toBe(401);
    expect((await tokenWith(await assertion(client.client_id, { claims: { jti: undefined } }))).status).toBe(401);
  });

  it("takes the token endpoint's URL without its trailing slash as aud, a 256-character jti, no iat, and an iat equal to exp", async () => {
    const { client } = await keyedClient();
    expect((await tokenWith(await assertion(client.client_id, { audience: `${ISS}${TOKEN.slice(0, -1)}` }))).status).toBe(200);
    expect((await tokenWith(await assertion(client.client_id, { audience: [`${ISS}/elsewhere`, `${ISS}${TOKEN}`] }))).status).toBe(200);
    const longest = randomUUID().replace(/-/g, "").repeat(8); // 256 characters
    expect((await tokenWith(await assertion(client.client_id, { claims: { jti: longest } }))).status).toBe(200);
    // iat is optional, and may equal exp.
    const seconds = Math.floor(nowMs() / 1000);
    expect((await tokenWith(await assertion(client.client_id, { claims: { iat: undefined } }))).status).toBe(200);
    expect((await tokenWith(await assertion(client.client_id, { claims: { iat: seconds + 20, exp: seconds + 20 } }))).status).toBe(200);
  });

  it("refuses an empty, a numeric or a 257-character jti, an iat after exp, and an assertion over 8,000 characters", async () => {
    const { client } = await keyedClient();
    const seconds = Math.floor(nowMs() / 1000);
    for (const claims of [{ jti: "" }, { jti: 12345 }, { jti: `${randomUUID().replace(/-/g, "").repeat(8)}x` }, { iat: seconds + 30, exp: seconds + 20 }, { padding: "p".repeat(8_000) }]) {
      const refused = await tokenWith(await assertion(client.client_id, { claims }));
      expect({ claims: Object.keys(claims), status: refused.status, json: refused.json }).toEqual({ claims: Object.keys(claims), status: 401, json: { error: "invalid_client" } });
    }
    // Nothing was used up: the same claims within the limits pass.
    const within = await assertion(client.client_id, { claims: { iat: seconds + 10, exp: seconds + 20, padding: "p".repeat(5_500) } });
    expect(within.length).toBeGreaterThan(7_500);
    expect((await tokenWith(within)).status).toBe(200);
  });

  it("refuses an assertion for another audience", async () => {
    const { client } = await keyedClient();
    for (const audience of ["https://other.example.test", `${ISS}${PAR}`, `${ISS}/api/`]) {
      const res = await tokenWith(await assertion(client.client_id, { audience }));
      expect(res.status, audience).toBe(401);
    }
  });

  it("refuses an assertion whose iss or sub is not the client", async () => {
    const { client } = await keyedClient();
    const { client: second } = await keyedClient();
    expect((await tokenWith(await assertion(client.client_id, { claims: { iss: second.client_id } }))).status).toBe(401);
    expect((await tokenWith(await assertion(client.client_id, { claims: { sub: second.client_id } }))).status).toBe(401);
    expect((await tokenWith(await assertion(client.client_id, { claims: { iss: undefined } }))).status).toBe(401);
    // client_id in the body naming another client.
    expect((await tokenWith(await assertion(client.client_id), { client_id: second.client_id })).status).toBe(401);
  });

  it("refuses HS256 (even keyed with something public), and a signature by a key the client did not register", async () => {
    const { client } = await keyedClient();
    const seconds = Math.floor(nowMs() / 1000);
    const hs = await new SignJWT({ iss: client.client_id, sub: client.client_id, aud: ISS, jti: randomUUID(), exp: seconds + 60 })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode((await rsa).jwk.n));
    expect((await tokenWith(hs)).status).toBe(401);
    expect((await tokenWith(await assertion(client.client_id, { key: await other }))).status).toBe(401);
  });

  it("refuses an assertion from a client without keys, and a private_key_jwt client's secret-less or public ways", async () => {
    const owner = await makeUser();
    const plain = await makeClient({ ownerId: owner.id, grantType: "client_credentials", redirectUris: [] });
    expect((await tokenWith(await assertion(plain.client_id))).status).toBe(401);
    // The client's own secret still works for it.
    expect((await call("POST", TOKEN, form({ grant_type: "client_credentials", client_id: plain.client_id, client_secret: plain.client_secret! }))).status).toBe(200);
    const { client } = await keyedClient();
    expect((await call("POST", TOKEN, form({ grant_type: "client_credentials", client_id: client.client_id }))).status).toBe(401);
    expect((await call("POST", TOKEN, form({ grant_type: "client_credentials", client_id: client.client_id, client_secret: "" }))).status).toBe(401);
    // Even a secret the row somehow held is not accepted from a private_key_jwt client.
    await (await db()).client.update({ where: { clientId: client.client_id }, data: { secretDigest: digest("held-secret") } });
    expect((await call("POST", TOKEN, form({ grant_type: "client_credentials", client_id: client.client_id, client_secret: "held-secret" }))).status).toBe(401);
  });

  it("refuses an assertion with a secret (one method per request), and a wrong or missing assertion type", async () => {
    const { client } = await keyedClient();
    const both = await tokenWith(await assertion(client.client_id), { client_secret: "x" });
    expect(both.status).toBe(400);
    expect(both.json).toEqual({ error: "invalid_request" });
    const basic = await call("POST", TOKEN, { ...form({ grant_type: "client_credentials", client_assertion_type: TYPE, client_assertion: await assertion(client.client_id) }), headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${client.client_id}:x`).toString("base64")}` } });
    expect(basic.status).toBe(400);
    const wrongType = await call("POST", TOKEN, form({ grant_type: "client_credentials", client_assertion_type: "urn:example", client_assertion: await assertion(client.client_id) }));
    expect(wrongType.status).toBe(401);
    expect((await call("POST", TOKEN, form({ grant_type: "client_credentials", client_assertion: await assertion(client.client_id) }))).status).toBe(401);
    expect((await call("POST", TOKEN, form({ grant_type: "client_credentials", client_assertion_type: TYPE, client_assertion: "not.a.jwt" }))).status).toBe(401);
  });
});

describe("client assertions at the other endpoints", () => {
  it("authenticates at PAR, with aud the issuer or the PAR endpoint", async () => {
    const { client } = await keyedClient("authorization_code");
    const push = async (audience: string) =>
      call("POST", PAR, form({ response_type: "code", redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256("v".repeat(64)), code_challenge_method: "S256", client_assertion_type: TYPE, client_assertion: await assertion(client.client_id, { audience }) }));
    expect((await push(ISS)).status).toBe(201);
    expect((await push(`${ISS}${PAR}`)).status).toBe(201);
    expect((await push(`${ISS}${TOKEN}`)).status).toBe(401);
  });

  it("authenticates at introspection and revocation", async () => {
    const { client } = await keyedClient();
    const token = String((await tokenWith(await assertion(client.client_id))).json.access_token);
    const seen = await call("POST", INTROSPECT, form({ token, client_assertion_type: TYPE, client_assertion: await assertion(client.client_id, { audience: `${ISS}${INTROSPECT}` }) }));
    expect(seen.status).toBe(200);
    expect(seen.json.active).toBe(true);
    const replay = await call("POST", INTROSPECT, form({ token, client_assertion_type: TYPE, client_assertion: await assertion(client.client_id, { claims: { sub: "someone" } }) }));
    expect(replay.status).toBe(401);
    const revoked = await call("POST", REVOKE, form({ token, client_assertion_type: TYPE, client_assertion: await assertion(client.client_id, { audience: `${ISS}${REVOKE}` }) }));
    expect(revoked.status).toBe(200);
    const after = await call("POST", INTROSPECT, form({ token, client_assertion_type: TYPE, client_assertion: await assertion(client.client_id) }));
    expect(after.json).toEqual({ active: false });
  });

  it("authenticates at the device authorization endpoint", async () => {
    const { client } = await keyedClient("device_code");
    const started = await call("POST", DEVICE, form({ client_assertion_type: TYPE, client_assertion: await assertion(client.client_id, { audience: `${ISS}${DEVICE}` }) }));
    expect(started.status).toBe(200);
    expect(started.json.device_code).toEqual(expect.any(String));
    expect((await call("POST", DEVICE, form({ client_id: client.client_id }))).status).toBe(401);
  });
});

describe("a client's keys", () => {
  let previous: Partial<Env> | undefined;
  afterEach(() => {
    if (previous) setEnvForTests(previous);
  });

  it("come with dynamic registration as jwks (private_key_jwt: no secret); jwks_uri and private keys are refused", async () => {
    previous = setEnvForTests({ registration: "open" });
    const metadata = { client_name: "Keyed", redirect_uris: [REDIRECT], token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [(await ec).jwk] } };
    const headers = { "x-forwarded-for": "198.51.100.77" };
    const registered = await call("POST", "/api/connect/oauth2/register/", { body: metadata, headers });
    expect(registered.status).toBe(201);
    expect(registered.json).not.toHaveProperty("client_secret");
    expect(registered.json.token_endpoint_auth_method).toBe("private_key_jwt");
    expect(registered.json.jwks).toEqual({ keys: [{ ...(await ec).jwk, alg: "ES256" }] });
    const clientId = String(registered.json.client_id);
    const pushed = await call("POST", PAR, form({ response_type: "code", redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256("v".repeat(64)), code_challenge_method: "S256", client_assertion_type: TYPE, client_assertion: await assertion(clientId, { key: await ec }) }));
    expect(pushed.status).toBe(201);
    // Only that way: client_id alone is refused.
    expect((await call("POST", PAR, form({ client_id: clientId, response_type: "code", redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256("v".repeat(64)), code_challenge_method: "S256" }))).status).toBe(401);

    const refusals: unknown[] = [
      { ...metadata, jwks: undefined },
      { ...metadata, jwks: undefined, jwks_uri: "https://client.example.test/jwks" },
      { ...metadata, jwks: { keys: [{ ...(await exportJWK((await rsa).privateKey)) }] } },
      { ...metadata, jwks: { keys: [{ kty: "oct", k: "c2VjcmV0" }] } },
      { ...metadata, jwks: { keys: [] } },
      { ...metadata, token_endpoint_auth_method: "none" },
    ];
    for (const body of refusals) {
      const res = await call("POST", "/api/connect/oauth2/register/", { body, headers });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json).toEqual({ error: "invalid_client_metadata" });
    }
  });

  it("come with client:create --jwks-file; the client then has no secret", async () => {
    const owner = await makeUser();
    const dir = await mkdtemp(join(tmpdir(), "jwks-"));
    const file = join(dir, "client.jwks.json");
    await writeFile(file, JSON.stringify({ keys: [(await rsa).jwk] }));
    const run = await runCli("client:create", "--json", "--owner", owner.email, "--name", "Keyed service", "--grant", "client_credentials", "--jwks-file", file);
    expect(run.code, run.stderr).toBe(0);
    const created = JSON.parse(run.stdout) as { client_id: string; client_secret: string | null };
    expect(created.client_secret).toBeNull();
    expect((await tokenWith(await assertion(created.client_id))).status).toBe(200);
    await writeFile(file, JSON.stringify({ keys: [await exportJWK((await rsa).privateKey)] }));
    const refused = await runCli("client:create", "--json", "--owner", owner.email, "--name", "Keyed service", "--grant", "client_credentials", "--jwks-file", file);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("private member");
  });

  it("are offered in the metadata, and used jti rows are pruned once expired", async () => {
    const metadata = (await call("GET", "/.well-known/oauth-authorization-server")).json;
    expect(metadata.token_endpoint_auth_methods_supported).toContain("private_key_jwt");
    expect(metadata.token_endpoint_auth_signing_alg_values_supported).toEqual(["RS256", "ES256"]);
    const { client } = await keyedClient();
    const jti = randomUUID();
    expect((await tokenWith(await assertion(client.client_id, { claims: { jti } }))).status).toBe(200);
    // This test's own row (other files write such rows to the shared database, expiring on their own clocks).
    const own = async () => (await db()).clientAssertion.count({ where: { key: digest(`${client.client_id}:${jti}`) } });
    expect(await own()).toBe(1);
    await pruneTokens();
    expect(await own()).toBe(1);
    advanceClock(61_000);
    expect((await pruneTokens()).client_assertions).toBeGreaterThan(0);
    expect(await own()).toBe(0);
  });
});
