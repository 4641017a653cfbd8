// RFC 7591 dynamic registration and RFC 7592 management (docs/rules/tokens.md#dynamic-registration) against
// the real route handlers and database: the three REGISTRATION modes, initial access tokens (single use,
// unspent by a refused registration, 24 hours), the metadata rules, the per-address limit, the consent page's
// marks, the management endpoint, the CLI's client:list and client:delete, and clients without an owner.
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { setEnvForTests, type Env } from "@/env";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { loadConsentScreen } from "@/consent/consent-screen";
import { s256 } from "@/oauth/pkce";
import { createRegistrationToken } from "@/registration/register-client";
import { db } from "@/db/client";
import { digest } from "@/secrets";
import { call } from "@/testing/app";
import { runCli } from "@/testing/cli";
import { refuseDeletes, refuseInserts } from "@/testing/faults";
import { makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const ISS = "http://localhost:3000";
const REGISTER = "/api/connect/oauth2/register/";
const REDIRECT = "https://agent.example.test/callback";
const VERIFIER = "registration-verifier-".padEnd(64, "v");

let previous: Partial<Env>;
const mode = (registration: Env["registration"]) => {
  previous ??= setEnvForTests({ registration });
  setEnvForTests({ registration });
};
afterEach(() => {
  resetClock();
  if (previous) setEnvForTests(previous);
});

/** A fresh client address per test, so that the per-address limit of one test does not reach another. */
let address = "";
beforeEach(() => {
  address = `198.51.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
});

const register = (body: unknown, token?: string, headers: Record<string, string> = {}) =>
  call("POST", REGISTER, { body, headers: { "x-forwarded-for": address, ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });

const webApp = { client_name: "Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] };

describe("REGISTRATION=off (the default)", () => {
  it("answers 404 and the metadata names no registration_endpoint", async () => {
    mode("off");
    const res = await register(webApp);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: "registration is off" });
    expect((await call("GET", "/.well-known/oauth-authorization-server")).json).not.toHaveProperty("registration_endpoint");
    expect((await call("GET", "/.well-known/openid-configuration")).json).not.toHaveProperty("registration_endpoint");
  });
});

describe("REGISTRATION=token", () => {
  it("registers with an initial access token, which the registration uses up", async () => {
    mode("token");
    const metadata = await call("GET", "/.well-known/oauth-authorization-server");
    expect(metadata.json).toMatchObject({ registration_endpoint: `${ISS}${REGISTER}` });
    expect((await register(webApp)).status).toBe(401);
    const { token } = await createRegistrationToken();
    const res = await register({ ...webApp, logo_uri: "https://agent.example.test/logo.png", client_uri: "https://agent.example.test/" }, token);
    expect(res.status).toBe(201);
    const body = res.json as Record<string, unknown>;
    expect(body).toEqual({
      client_id: expect.any(String),
      client_id_issued_at: expect.any(Number),
      registration_access_token: expect.stringMatching(/^[\w-]{43}$/),
      registration_client_uri: `${ISS}${REGISTER}${body.client_id}/`,
      client_name: "Agent",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      client_uri: "https://agent.example.test/",
      logo_uri: "https://agent.example.test/logo.png",
      require_pushed_authorization_requests: false,
      application_type: "web",
    });
    expect(res.headers.get("location")).toBe(body.registration_client_uri);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const row = await (await db()).client.findUnique({ where: { clientId: body.client_id as string } });
    expect(row).toMatchObject({ ownerId: null, isPublic: true, registeredVia: "token", registrationTokenDigest: digest(body.registration_access_token as string) });
    const again = await register(webApp, token);
    expect(again.status).toBe(401);
    expect(again.json).toEqual({ error: "invalid_token" });
  });

  it("keeps the token for a refused registration, and refuses it after 24 hours", async () => {
    mode("token");
    const { token, expires_at } = await createRegistrationToken();
    const refused = await register({ ...webApp, redirect_uris: ["myapp://callback"] }, token);
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ error: "invalid_redirect_uri" });
    expect((await register(webApp, token)).status).toBe(201);
    const late = await createRegistrationToken();
    expect(new Date(late.expires_at).getTime() - new Date(expires_at).getTime()).toBeGreaterThanOrEqual(0);
    advanceClock(24 * 3600 * 1000 + 1000);
    expect((await register(webApp, late.token)).status).toBe(401);
  });

  it("gives concurrent registrations with one token exactly one client", async () => {
    mode("token");
    const { token } = await createRegistrationToken();
    const results = await Promise.all(Array.from({ length: 6 }, () => register(webApp, token)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 401, 401, 401, 401, 401]);
  });

  it("is given by the CLI as {token, expires_at}, 24 hours ahead", async () => {
    const run = await runCli("registration:token", "--json");
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { token: string; expires_at: string };
    expect(Object.keys(out)).toEqual(["token", "expires_at"]);
    expect(out.token).toMatch(/^[\w-]{43}$/);
    const row = await (await db()).registrationToken.findUnique({ where: { digest: digest(out.token) } });
    expect(row!.expiresAt.toISOString()).toBe(out.expires_at);
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(24 * 3600 * 1000);
  });
});

describe("REGISTRATION=open", () => {
  it("registers anyone; the consent page marks such apps unverified and hides their logo", async () => {
    mode("open");
    const res = await register({ ...webApp, client_name: "Totally Official Bank", logo_uri: "https://agent.example.test/logo.png" });
    expect(res.status).toBe(201);
    const clientId = (res.json as { client_id: string }).client_id;
    const audit = await (await db()).auditEvent.findFirst({ where: { type: "client.created", clientId } });
    expect(audit).toMatchObject({ ip: address, userId: null });

    const user = await makeUser();
    const cookie = await sessionCookie(user);
    const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256(VERIFIER), code_challenge_method: "S256" });
    const auth = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie } });
    const sealed = new URL(auth.headers.get("location")!, ISS).searchParams.get("request")!;
    expect(await loadConsentScreen(sealed, user.id)).toMatchObject({ clientName: "Totally Official Bank", ownerName: null, unverified: true, logoUri: null });

    // With an initial access token the app is vouched for: no mark, and its https logo is shown.
    const { token } = await createRegistrationToken();
    const vouched = await register({ ...webApp, logo_uri: "https://agent.example.test/logo.png" }, token);
    const vouchedQuery = new URLSearchParams({ ...Object.fromEntries(query), client_id: (vouched.json as { client_id: string }).client_id });
    const vouchedAuth = await call("GET", `/api/connect/oauth2/auth/?${vouchedQuery}`, { headers: { cookie } });
    const vouchedSealed = new URL(vouchedAuth.headers.get("location")!, ISS).searchParams.get("request")!;
    expect(await loadConsentScreen(vouchedSealed, user.id)).toMatchObject({ ownerName: null, unverified: false, logoUri: "https://agent.example.test/logo.png" });

    // A registered public client completes the code flow with PKCE.
    const decided = await call("POST", "/consent/decide", {
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie },
      raw: new URLSearchParams({ request: sealed, csrf: consentCsrfToken(user.id, sealed), decision: "approve" }).toString(),
    });
    const code = new URL(decided.headers.get("location")!).searchParams.get("code")!;
    const tokens = await call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: clientId } });
    expect(tokens.status).toBe(200);
    expect(tokens.json).toMatchObject({ token_type: "Bearer", scope: "readonly", user: `/api/user/${user.id}/` });
  });

  it("limits registrations to 20 an hour per address", async () => {
    mode("open");
    for (let i = 0; i < 20; i++) expect((await register(webApp)).status).toBe(201);
    const limited = await register(webApp);
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: "rate_limited" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(3000);
    // This address's refusals only: other files share the database.
    const refusals = await (await db()).auditEvent.findMany({ where: { type: "rate_limited", ip: address } });
    expect(refusals.filter((event) => JSON.stringify(event.detail).includes("registration"))).toHaveLength(1);
    expect((await register(webApp, undefined, { "x-forwarded-for": "203.0.113.77" })).status).toBe(201);
  });

  it("refuses malformed metadata with the RFC 7591 error, creating nothing", async () => {
    mode("open");
    // This test's own registrations only (its client address): other files create clients meanwhile.
    const created = () => db().then((d) => d.auditEvent.count({ where: { type: "client.created", ip: address } }));
    const before = await created();
    const cases: Array<[unknown, string]> = [
      [{ ...webApp, redirect_uris: ["myapp://cb"] }, "invalid_redirect_uri"],
      [{ ...webApp, redirect_uris: ["http://agent.example.test/cb"] }, "invalid_redirect_uri"],
      [{ ...webApp, redirect_uris: ["https://agent.example.test/cb#x"] }, "invalid_redirect_uri"],
      [{ ...webApp, redirect_uris: [] }, "invalid_redirect_uri"],
      [{ ...webApp, grant_types: ["password"] }, "invalid_client_metadata"],
      [{ ...webApp, grant_types: ["client_credentials"] }, "invalid_client_metadata"],
      [{ client_name: "Owner's helper", grant_types: ["password"], response_types: [], token_endpoint_auth_method: "client_secret_basic" }, "invalid_client_metadata"],
      [{ client_name: "Cron", grant_types: ["client_credentials"], response_types: [], token_endpoint_auth_method: "client_secret_basic" }, "invalid_client_metadata"],
      [{ ...webApp, grant_types: ["authorization_code", "implicit"] }, "invalid_client_metadata"],
      [{ ...webApp, response_types: ["token"] }, "invalid_client_metadata"],
      [{ ...webApp, token_endpoint_auth_method: "private_key_jwt" }, "invalid_client_metadata"],
      [{ ...webApp, logo_uri: "http://agent.example.test/logo.png" }, "invalid_client_metadata"],
      [{ ...webApp, client_uri: "javascript:alert(1)" }, "invalid_client_metadata"],
      [{ ...webApp, scope: "admin" }, "invalid_client_metadata"],
      [{ ...webApp, redirect_uris: "https://agent.example.test/cb" }, "invalid_client_metadata"],
      [{ ...webApp, client_name: 42 }, "invalid_client_metadata"],
      // docs/rules/openid-connect.md#logout, docs/rules/openid-connect.md#back-channel-logout
      [{ ...webApp, post_logout_redirect_uris: ["http://agent.example.test/bye"] }, "invalid_client_metadata"],
      [{ ...webApp, post_logout_redirect_uris: ["https://agent.example.test/bye#x"] }, "invalid_client_metadata"],
      [{ ...webApp, backchannel_logout_uri: "http://agent.example.test/logout" }, "invalid_client_metadata"],
      [{ ...webApp, backchannel_logout_uri: "not a url" }, "invalid_client_metadata"],
      [{ ...webApp, grant_types: ["implicit"], response_types: ["token"], backchannel_logout_uri: "https://agent.example.test/logout" }, "invalid_client_metadata"],
      [[1, 2], "invalid_client_metadata"],
    ];
    for (const [body, error] of cases) {
      const res = await register(body);
      expect({ body, status: res.status, json: res.json }).toEqual({ body, status: 400, json: { error } });
    }
    const garbage = await call("POST", REGISTER, { raw: "{not json", headers: { "content-type": "application/json", "x-forwarded-for": address } });
    expect(garbage.status).toBe(400);
    expect(garbage.json).toEqual({ error: "invalid_client_metadata" });
    expect(await created()).toBe(before);
    expect((await register(webApp)).status).toBe(201); // (which the count does see)
    expect(await created()).toBe(before + 1);
  });

  it("registers a confidential device client, whose secret works at the token endpoint", async () => {
    mode("open");
    const res = await register({ client_name: "CLI", grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"], response_types: [] });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ token_endpoint_auth_method: "client_secret_basic", client_secret: expect.stringMatching(/^[\w-]{43}$/), client_secret_expires_at: 0, redirect_uris: [] });
    const { client_id, client_secret } = res.json as { client_id: string; client_secret: string };
    const device = await call("POST", "/api/connect/oauth2/device/", { body: { client_id, client_secret, scope: "readonly" } });
    expect(device.status).toBe(200);
  });
});

describe("RFC 7592 management", () => {
  it("reads, replaces and deletes with the registration access token; anything else is 401", async () => {
    mode("open");
    const created = (await register(webApp)).json as { client_id: string; registration_access_token: string; registration_client_uri: string };
    const path = new URL(created.registration_client_uri).pathname;
    const auth = { authorization: `Bearer ${created.registration_access_token}` };

    const read = await call("GET", path, { headers: auth });
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ client_id: created.client_id, client_name: "Agent", registration_access_token: created.registration_access_token });
    for (const headers of [{}, { authorization: "Bearer wrong" }] as Array<Record<string, string>>) {
      const res = await call("GET", path, { headers });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: "invalid_token" });
    }
    const other = (await register(webApp)).json as { registration_access_token: string };
    expect((await call("GET", path, { headers: { authorization: `Bearer ${other.registration_access_token}` } })).status).toBe(401);

    const replaced = await call("PUT", path, { headers: auth, body: { ...webApp, client_id: created.client_id, client_name: "Agent 2", redirect_uris: ["https://agent.example.test/new"], require_pushed_authorization_requests: true } });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toMatchObject({ client_name: "Agent 2", redirect_uris: ["https://agent.example.test/new"], require_pushed_authorization_requests: true });
    const badPut = await call("PUT", path, { headers: auth, body: { ...webApp, client_id: created.client_id, redirect_uris: ["myapp://x"] } });
    expect(badPut.json).toEqual({ error: "invalid_redirect_uri" });
    const switching = await call("PUT", path, { headers: auth, body: { ...webApp, client_id: created.client_id, token_endpoint_auth_method: "client_secret_basic" } });
    expect(switching.json).toEqual({ error: "invalid_client_metadata" });

    const deleted = await call("DELETE", path, { headers: auth });
    expect(deleted.status).toBe(204);
    expect((await call("GET", path, { headers: auth })).status).toBe(401);
    expect(await (await db()).auditEvent.count({ where: { type: "client.deleted", clientId: created.client_id } })).toBe(1);
  });
});

describe("RFC 7592 delete and its audit event (docs/rules/operations.md#audit-log)", () => {
  async function registered() {
    mode("open");
    const created = (await register(webApp)).json as { client_id: string; registration_access_token: string; registration_client_uri: string };
    return { created, path: new URL(created.registration_client_uri).pathname, auth: { authorization: `Bearer ${created.registration_access_token}` } };
  }
  const events = (clientId: string) => db().then((d) => d.auditEvent.count({ where: { type: "client.deleted", clientId } }));
  const clients = (clientId: string) => db().then((d) => d.client.count({ where: { clientId } }));

  it("keeps the client when its event cannot be written (one transaction), and deletes both once it can", async () => {
    const { created, path, auth } = await registered();
    const undo = await refuseInserts("AuditEvent", "clientId", created.client_id);
    try {
      const refused = await call("DELETE", path, { headers: auth });
      expect(refused.status).toBeGreaterThanOrEqual(500);
    } finally {
      await undo();
    }
    expect(await clients(created.client_id)).toBe(1);
    expect(await events(created.client_id)).toBe(0);
    expect((await call("DELETE", path, { headers: auth })).status).toBe(204);
    expect(await clients(created.client_id)).toBe(0);
    expect(await events(created.client_id)).toBe(1);
  });

  it("writes no event when the client's deletion fails", async () => {
    const { created, path, auth } = await registered();
    const undo = await refuseDeletes("Client", "clientId", created.client_id);
    try {
      const refused = await call("DELETE", path, { headers: auth });
      expect(refused.status).toBeGreaterThanOrEqual(500);
    } finally {
      await undo();
    }
    expect(await clients(created.client_id)).toBe(1);
    expect(await events(created.client_id)).toBe(0);
  });
});

describe("administrators (CLI)", () => {
  it("client:list shows clients without an owner; client:delete removes any client and its tokens", async () => {
    mode("open");
    const created = (await register(webApp)).json as { client_id: string };
    const list = await runCli("client:list", "--json");
    expect(list.code).toBe(0);
    const listed = (JSON.parse(list.stdout) as Array<Record<string, unknown>>).find((c) => c.client_id === created.client_id);
    expect(listed).toMatchObject({ client_id: created.client_id, owner: null, grant_type: "authorization_code", public: true, registration: "open" });
    const removed = await runCli("client:delete", `--client-id=${created.client_id}`, "--json");
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ client_id: created.client_id, name: "Agent", deleted: true });
    expect(await (await db()).client.findUnique({ where: { clientId: created.client_id } })).toBeNull();
    const again = await runCli("client:delete", `--client-id=${created.client_id}`, "--json");
    expect(again).toMatchObject({ code: 1, stdout: "", stderr: "error: client-id: no such client\n" });
  });
});

describe("logout metadata (docs/rules/openid-connect.md#logout)", () => {
  it("registers post_logout_redirect_uris and a backchannel_logout_uri, answers them, and updates them (RFC 7592)", async () => {
    mode("open");
    const logoutMetadata = { post_logout_redirect_uris: ["https://agent.example.test/bye", "http://127.0.0.1:8000/bye"], backchannel_logout_uri: "https://agent.example.test/logout" };
    const res = await register({ ...webApp, ...logoutMetadata });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ ...logoutMetadata, backchannel_logout_session_required: true });
    const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: String(res.json.client_id) } });
    expect(row).toMatchObject({ postLogoutRedirectUris: JSON.stringify(logoutMetadata.post_logout_redirect_uris), backchannelLogoutUri: logoutMetadata.backchannel_logout_uri });
    const updated = await call("PUT", new URL(String(res.json.registration_client_uri)).pathname, {
      body: { ...webApp, client_id: res.json.client_id },
      headers: { authorization: `Bearer ${String(res.json.registration_access_token)}` },
    });
    expect(updated.status).toBe(200);
    expect(updated.json).not.toHaveProperty("post_logout_redirect_uris");
    expect(updated.json).not.toHaveProperty("backchannel_logout_uri");
  });
});
