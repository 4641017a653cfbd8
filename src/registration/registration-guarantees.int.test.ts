// The guarantees of dynamic registration (RFC 7591, RFC 7592; docs/rules/tokens.md#dynamic-registration), each
// on its own: which metadata a registration accepts and refuses, what the client information answers for each
// kind of client, how initial access tokens and registration access tokens are read (one bearer token, nothing
// before or after it), that a token is checked before the metadata, and that an update or a deletion changes
// the one client it names.
import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { setEnvForTests, type Env } from "@/env";
import { createRegistrationToken } from "@/registration/register-client";
import { db } from "@/db/client";
import { call } from "@/testing/app";

const REGISTER = "/api/connect/oauth2/register/";
const REDIRECT = "https://agent.example.test/callback";
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

let previous: Partial<Env> | undefined;
const mode = (registration: Env["registration"]) => {
  previous ??= setEnvForTests({ registration });
  setEnvForTests({ registration });
};
afterEach(() => {
  resetClock();
  if (previous) setEnvForTests(previous);
});

let address = "";
beforeEach(() => {
  address = `203.0.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  mode("open");
});

const register = (body: unknown, headers: Record<string, string> = {}) => call("POST", REGISTER, { body, headers: { "x-forwarded-for": address, ...headers } });
const webApp = { client_name: "Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" };
const confidential = { client_name: "Agent", redirect_uris: [REDIRECT] };

type Registered = { client_id: string; client_secret?: string; registration_access_token: string; registration_client_uri: string } & Record<string, unknown>;
async function registered(body: unknown): Promise<Registered> {
  const res = await register(body);
  expect(res.status).toBe(201);
  return res.json as Registered;
}
const pathOf = (client: Registered) => new URL(client.registration_client_uri).pathname;
const bearer = (client: Registered) => ({ authorization: `Bearer ${client.registration_access_token}` });

async function publicJwks() {
  const { publicKey } = await generateKeyPair("ES256", { extractable: true });
  return { keys: [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" }] };
}

describe("the metadata a registration accepts", () => {
  it("an implicit client: public by default, grant_types [implicit], response_types [token]", async () => {
    const client = await registered({ client_name: "Implicit", redirect_uris: [REDIRECT], grant_types: ["implicit"], response_types: ["token"] });
    expect(client).toMatchObject({ grant_types: ["implicit"], response_types: ["token"], token_endpoint_auth_method: "none" });
    expect(client.client_secret).toBeUndefined();
  });

  it("a device client: no response_types, grant_types [the device grant, refresh_token]", async () => {
    const client = await registered({ client_name: "TV", grant_types: [DEVICE_GRANT], token_endpoint_auth_method: "none" });
    expect(client).toMatchObject({ grant_types: [DEVICE_GRANT, "refresh_token"], response_types: [], redirect_uris: [] });
  });

  it("without client_name: Unnamed application; client_id_issued_at is now in seconds", async () => {
    const before = Math.floor(nowMs() / 1000);
    const client = await registered({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    expect(client.client_name).toBe("Unnamed application");
    expect(client.client_id_issued_at).toBeGreaterThanOrEqual(before - 1);
    expect(client.client_id_issued_at).toBeLessThanOrEqual(Math.floor(nowMs() / 1000) + 1);
  });

  it("an http client_uri is kept; empty client_uri and logo_uri are no URI", async () => {
    const client = await registered({ ...webApp, client_uri: "http://agent.example.test/", logo_uri: "" });
    expect(client.client_uri).toBe("http://agent.example.test/");
    expect(client).not.toHaveProperty("logo_uri");
    const empty = await registered({ ...webApp, client_uri: "" });
    expect(empty).not.toHaveProperty("client_uri");
  });

  it("a blank scope is no scope: the client may ask for the default", async () => {
    const client = await registered({ client_name: "TV", grant_types: [DEVICE_GRANT], token_endpoint_auth_method: "none", scope: "   " });
    expect(client).not.toHaveProperty("scope");
    const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    expect(row.scope).toBeNull();
    const res = await call("POST", "/api/connect/oauth2/device/", { body: { client_id: client.client_id } });
    expect(res.status).toBe(200);
  });
});

describe("the metadata a registration refuses", () => {
  it.each([
    ["response_types that do not match the grant", { ...webApp, response_types: ["token"] }, "invalid_client_metadata"],
    ["an implicit client with a secret", { redirect_uris: [REDIRECT], grant_types: ["implicit"], token_endpoint_auth_method: "client_secret_basic" }, "invalid_client_metadata"],
    ["jwks_uri", { ...confidential, jwks_uri: "https://agent.example.test/jwks" }, "invalid_client_metadata"],
    ["a device client with redirect_uris", { grant_types: [DEVICE_GRANT], redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }, "invalid_redirect_uri"],
    ["a client_uri that is not a URL", { ...webApp, client_uri: "not a url" }, "invalid_client_metadata"],
    ["a client_uri of another scheme", { ...webApp, client_uri: "ftp://agent.example.test/" }, "invalid_client_metadata"],
    ["a second response type beside the grant's", { ...webApp, response_types: ["code", "token"] }, "invalid_client_metadata"],
    ["a response type for a device client", { grant_types: [DEVICE_GRANT], response_types: ["code"], token_endpoint_auth_method: "none" }, "invalid_client_metadata"],
    ["a grant type this service does not have", { ...confidential, grant_types: ["urn:ietf:params:oauth:grant-type:jwt-bearer"] }, "invalid_client_metadata"],
    ["refresh tokens for an implicit client", { redirect_uris: [REDIRECT], grant_types: ["implicit", "refresh_token"], response_types: ["token"] }, "invalid_client_metadata"],
    ["a password client", { ...confidential, grant_types: ["password"] }, "invalid_client_metadata"],
    ["a client_credentials client", { ...confidential, grant_types: ["client_credentials"] }, "invalid_client_metadata"],
  ])("refuses %s", async (_name, body, error) => {
    const res = await register(body);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error });
  });
});

describe("initial access tokens (REGISTRATION=token)", () => {
  it("no token: 401 with a realm; a malformed one: 401 invalid_token", async () => {
    mode("token");
    const none = await register(webApp);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="registration"');
    const { token } = await createRegistrationToken();
    for (const header of [`Bearer ${token}!`, `xBearer ${token}`]) {
      const malformed = await register(webApp, { authorization: header });
      expect(malformed.status).toBe(401);
      expect(malformed.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    }
    expect((await register(webApp, { authorization: `Bearer   ${token}` })).status).toBe(201);
  });

  it("an unknown, a used or an expired token is refused before the metadata is read", async () => {
    mode("token");
    const badMetadata = { ...webApp, redirect_uris: ["myapp://callback"] };
    const expect401 = async (token: string) => {
      const res = await register(badMetadata, { authorization: `Bearer ${token}` });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: "invalid_token" });
      expect(res.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    };
    await expect401("unknown-token");
    const used = await createRegistrationToken();
    expect((await register(webApp, { authorization: `Bearer ${used.token}` })).status).toBe(201);
    await expect401(used.token);
    const expired = await createRegistrationToken();
    advanceClock(24 * 3600 * 1000 + 1000);
    await expect401(expired.token);
  });

  it("a registration uses up its own token only", async () => {
    mode("token");
    const first = await createRegistrationToken();
    const second = await createRegistrationToken();
    expect((await register(webApp, { authorization: `Bearer ${first.token}` })).status).toBe(201);
    expect((await register(webApp, { authorization: `Bearer ${second.token}` })).status).toBe(201);
  });

  it("the client.created event says how the client registered and its grant", async () => {
    mode("token");
    const { token } = await createRegistrationToken();
    const res = await register(webApp, { authorization: `Bearer ${token}` });
    const event = await (await db()).auditEvent.findFirstOrThrow({ where: { type: "client.created", clientId: (res.json as Registered).client_id } });
    expect(JSON.parse(event.detail!)).toEqual({ via: "registration", registration: "token", grant_type: "authorization_code" });
  });
});

describe("the registration access token (RFC 7592)", () => {
  it("is read as one bearer token: nothing before or after it, any number of spaces between; a wrong one is 401 invalid_token", async () => {
    const client = await registered(webApp);
    const path = pathOf(client);
    expect((await call("GET", path, { headers: { authorization: `Bearer   ${client.registration_access_token}` } })).status).toBe(200);
    for (const header of [`Bearer ${client.registration_access_token}!`, `xBearer ${client.registration_access_token}`]) {
      const malformed = await call("GET", path, { headers: { authorization: header } });
      expect(malformed.status).toBe(401);
      expect(malformed.json).toEqual({ error: "invalid_token" });
      expect(malformed.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    }
  });

  it("an update answers the client information with the registration access token", async () => {
    const client = await registered(webApp);
    const res = await call("PUT", pathOf(client), { headers: bearer(client), body: { ...webApp, client_name: "Renamed", client_id: client.client_id } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ client_name: "Renamed", registration_access_token: client.registration_access_token });
  });

  it("an update must name the client, and an unreadable body is invalid_client_metadata", async () => {
    const client = await registered(webApp);
    const unnamed = await call("PUT", pathOf(client), { headers: bearer(client), body: { ...webApp, client_name: "Renamed" } });
    expect(unnamed.status).toBe(400);
    expect(unnamed.json).toEqual({ error: "invalid_request" });
    const unreadable = await call("PUT", pathOf(client), { headers: { ...bearer(client), "content-type": "application/json" }, raw: "{not json" });
    expect(unreadable.status).toBe(400);
    expect(unreadable.json).toEqual({ error: "invalid_client_metadata" });
    const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    expect(row.name).toBe("Agent");
  });

  it("a confidential client's update may send its own secret, not another; a public client sends none", async () => {
    const client = await registered(confidential);
    const put = (secret: string) => call("PUT", pathOf(client), { headers: bearer(client), body: { ...confidential, client_id: client.client_id, client_secret: secret } });
    expect((await put(client.client_secret!)).status).toBe(200);
    const wrong = await put(`${client.client_secret!}x`);
    expect(wrong.status).toBe(400);
    expect(wrong.json).toEqual({ error: "invalid_client_metadata" });
    const pub = await registered(webApp);
    const withSecret = await call("PUT", pathOf(pub), { headers: bearer(pub), body: { ...webApp, client_id: pub.client_id, client_secret: "anything" } });
    expect(withSecret.status).toBe(400);
    expect(withSecret.json).toEqual({ error: "invalid_client_metadata" });
  });

  it("an update cannot switch a client between a secret and private_key_jwt", async () => {
    const jwks = await publicJwks();
    const secretClient = await registered(confidential);
    const toKeys = await call("PUT", pathOf(secretClient), { headers: bearer(secretClient), body: { ...confidential, client_id: secretClient.client_id, token_endpoint_auth_method: "private_key_jwt", jwks } });
    expect(toKeys.status).toBe(400);
    expect(toKeys.json).toEqual({ error: "invalid_client_metadata" });
    const keysClient = await registered({ ...confidential, token_endpoint_auth_method: "private_key_jwt", jwks });
    const toSecret = await call("PUT", pathOf(keysClient), { headers: bearer(keysClient), body: { ...confidential, client_id: keysClient.client_id } });
    expect(toSecret.status).toBe(400);
    expect(toSecret.json).toEqual({ error: "invalid_client_metadata" });
    const keysKept = await call("PUT", pathOf(keysClient), { headers: bearer(keysClient), body: { ...confidential, client_id: keysClient.client_id, token_endpoint_auth_method: "private_key_jwt", jwks } });
    expect(keysKept.status).toBe(200);
  });

  it("a deletion removes that client only, recorded as client.deleted via registration", async () => {
    const doomed = await registered(webApp);
    const kept = await registered(webApp);
    expect((await call("DELETE", pathOf(doomed), { headers: bearer(doomed) })).status).toBe(204);
    const clients = await (await db()).client.findMany({ where: { clientId: { in: [doomed.client_id, kept.client_id] } } });
    expect(clients.map((c) => c.clientId)).toEqual([kept.client_id]);
    const event = await (await db()).auditEvent.findFirstOrThrow({ where: { type: "client.deleted", clientId: doomed.client_id } });
    expect(JSON.parse(event.detail!)).toEqual({ via: "registration" });
  });
});
