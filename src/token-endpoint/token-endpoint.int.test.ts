import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { call } from "@/testing/app";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";

const TOKEN = "/api/connect/oauth2/token/";

afterEach(() => resetClock());

async function ownerAndClient() {
  const user = await makeUser();
  const client = await makeClient({ ownerId: user.id });
  return { user, client };
}

describe("password grant", () => {
  it("issues the token record with no-store headers", async () => {
    const { user, client } = await ownerAndClient();
    const res = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password, scope: "readonly" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("pragma")).toBe("no-cache");
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const body = res.json as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "refresh_token", "resource_uri", "scope", "scopes", "token_type", "user"]);
    expect(body.resource_uri).toBe(`/api/oauth2token/${body.access_token}/`);
    expect(body.user).toBe(`/api/user/${user.id}/`);
    expect(body.scopes).toEqual(["readonly"]);
    expect(body.scope).toBe("readonly");
    expect(body.expires_in).toBe(3600);
    expect(body.token_type).toBe("Bearer");
    expect(String(body.access_token).length).toBeGreaterThanOrEqual(43);
    expect(body.refresh_token).not.toBe(body.access_token);
  });

  it("defaults to the readonly scope when none is asked for (RFC 6749 3.3)", async () => {
    const { user, client } = await ownerAndClient();
    const res = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password },
    });
    expect(res.status).toBe(200);
    expect(res.json.scopes).toEqual(["readonly"]);
  });

  it("accepts commas between scopes and answers them space-separated", async () => {
    const { user, client } = await ownerAndClient();
    const res = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email.toUpperCase(), password: user.password, scope: "readwrite,readonly" },
    });
    expect(res.status).toBe(200);
    expect(res.json.scopes).toEqual(["readonly", "readwrite"]);
    expect(res.json.scope).toBe("readonly readwrite");
  });

  it("takes JSON sent as text/plain", async () => {
    const { user, client } = await ownerAndClient();
    const res = await call("POST", TOKEN, {
      headers: { "content-type": "text/plain;charset=UTF-8" },
      raw: JSON.stringify({ grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password }),
    });
    expect(res.status).toBe(200);
  });

  it("takes a form-encoded body", async () => {
    const { user, client } = await ownerAndClient();
    const form = new URLSearchParams({ grant_type: "password", client_id: client.client_id, client_secret: client.client_secret!, username: user.email, password: user.password });
    const res = await call("POST", TOKEN, { headers: { "content-type": "application/x-www-form-urlencoded" }, raw: form.toString() });
    expect(res.status).toBe(200);
  });

  it("takes HTTP Basic client authentication with form-url-decoded parts", async () => {
    const { user, client } = await ownerAndClient();
    const basic = Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret!)}`).toString("base64");
    const res = await call("POST", TOKEN, {
      headers: { authorization: `Basic ${basic}` },
      body: { grant_type: "password", username: user.email, password: user.password },
    });
    expect(res.status).toBe(200);
  });

  it("refuses Basic and a body secret together with invalid_request", async () => {
    const { user, client } = await ownerAndClient();
    const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64");
    const res = await call("POST", TOKEN, {
      headers: { authorization: `Basic ${basic}` },
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "invalid_request" });
  });

  it("answers a wrong Basic secret with 401 invalid_client and a Basic challenge", async () => {
    const { user, client } = await ownerAndClient();
    const basic = Buffer.from(`${client.client_id}:wrong`).toString("base64");
    const res = await call("POST", TOKEN, { headers: { authorization: `Basic ${basic}` }, body: { grant_type: "password", username: user.email, password: user.password } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: "invalid_client" });
    expect(res.headers.get("www-authenticate")).toBe('Basic realm="oauth"');
  });

  it.each([
    ["a wrong secret", (c: { client_id: string }) => ({ client_id: c.client_id, client_secret: "nope" })],
    ["no secret for a confidential client", (c: { client_id: string }) => ({ client_id: c.client_id })],
    ["an unknown client", () => ({ client_id: "unknown", client_secret: "x" })],
    ["no client at all", () => ({})],
  ])("answers %s with 401 invalid_client", async (_name, credentials) => {
    const { user, client } = await ownerAndClient();
    const res = await call("POST", TOKEN, { body: { grant_type: "password", username: user.email, password: user.password, ...credentials(client) } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: "invalid_client" });
    expect(res.headers.get("www-authenticate")).toBeNull();
  });

  it("gives another user's correct password invalid_grant: the grant is for the client's owner only", async () => {
    const { client } = await ownerAndClient();
    const other = await makeUser();
    const res = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: other.email, password: other.password },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "invalid_grant" });
  });

  it("gives a wrong password and an unknown e-mail invalid_grant", async () => {
    const { user, client } = await ownerAndClient();
    for (const [username, password] of [[user.email, "wrong password"], ["nobody@example.test", "whatever1"]]) {
      const res = await call("POST", TOKEN, { body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username, password } });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: "invalid_grant" });
    }
  });

  it("limits failed attempts per client and e-mail: the 11th try gets 429 even with the right password, until the window passes", async () => {
    const { user, client } = await ownerAndClient();
    const attempt = (password: string) =>
      call("POST", TOKEN, { body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password } });
    for (let i = 0; i < 10; i++) expect((await attempt("wrong password")).status).toBe(400);
    const limited = await attempt(user.password);
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: "rate_limited" });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);

    // Another client's owner is not affected by this key.
    const other = await ownerAndClient();
    const fine = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: other.client.client_id, client_secret: other.client.client_secret, username: other.user.email, password: other.user.password },
    });
    expect(fine.status).toBe(200);

    advanceClock(retryAfter * 1000 + 1000);
    expect((await attempt(user.password)).status).toBe(200);
  });

  it("refuses the password grant to a client registered for another grant type", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id, grantType: "authorization_code" });
    const res = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "unauthorized_client" });
  });

  it("answers an unknown scope with invalid_scope", async () => {
    const { user, client } = await ownerAndClient();
    const res = await call("POST", TOKEN, {
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password, scope: "readonly admin" },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "invalid_scope" });
  });
});

describe("request format", () => {
  it.each([
    ["a missing grant_type", { "content-type": "application/json" }, JSON.stringify({ client_id: "x" }), 400, "invalid_request"],
    ["malformed JSON", { "content-type": "application/json" }, "{\"grant_type\": ", 400, "invalid_request"],
    ["a JSON array", { "content-type": "application/json" }, "[1, 2]", 400, "invalid_request"],
    ["a non-string parameter", { "content-type": "application/json" }, JSON.stringify({ grant_type: 5 }), 400, "invalid_request"],
    ["an empty body", { "content-type": "application/json" }, "", 400, "invalid_request"],
    ["a repeated form parameter", { "content-type": "application/x-www-form-urlencoded" }, "grant_type=password&grant_type=password", 400, "invalid_request"],
    ["an unsupported content type", { "content-type": "application/xml" }, "<x/>", 415, "invalid_request"],
    ["a body over 64 KiB", { "content-type": "application/json" }, JSON.stringify({ grant_type: "password", pad: "x".repeat(70 * 1024) }), 413, "invalid_request"],
  ])("answers %s with %i", async (_name, headers, raw, status, error) => {
    const res = await call("POST", TOKEN, { headers, raw });
    expect(res.status).toBe(status);
    expect(res.json).toEqual({ error });
  });

  it("answers an unknown grant_type with unsupported_grant_type", async () => {
    const { client } = await ownerAndClient();
    const res = await call("POST", TOKEN, { body: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", client_id: client.client_id, client_secret: client.client_secret } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "unsupported_grant_type" });
  });

  it("answers GET with 405 and Allow", async () => {
    const res = await call("GET", TOKEN);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST, OPTIONS");
    expect(res.json).toEqual({ error: "invalid_request" });
  });
});

describe("refresh_token grant", () => {
  const refresh = (client: { client_id: string; client_secret: string | null }, refreshToken: string, extra: Record<string, string> = {}) =>
    call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: client.client_id, client_secret: client.client_secret, ...extra } });

  it("rotates: a new access token and a new refresh token, and the old access token keeps working", async () => {
    const session = await passwordSession();
    const res = await refresh(session.client, session.refreshToken);
    expect(res.status).toBe(200);
    expect(res.json.access_token).not.toBe(session.accessToken);
    expect(res.json.refresh_token).not.toBe(session.refreshToken);
    expect(res.json.scopes).toEqual(["readonly", "readwrite"]);
    // Both access tokens work: a refresh does not end the access token issued before it.
    for (const token of [session.accessToken, String(res.json.access_token)]) {
      const me = await call("GET", `/api/user/${session.user.id}/`, { token });
      expect({ status: me.status, id: me.json.id }).toEqual({ status: 200, id: session.user.id });
    }
  });

  it("reuse of a used refresh token is invalid_grant and revokes the whole grant", async () => {
    const session = await passwordSession();
    const first = await refresh(session.client, session.refreshToken);
    expect(first.status).toBe(200);
    const replay = await refresh(session.client, session.refreshToken);
    expect(replay.status).toBe(400);
    expect(replay.json).toEqual({ error: "invalid_grant" });
    // Every token of the grant is now dead: the original and the rotated access token, and the new refresh token.
    expect((await call("GET", `/api/user/${session.user.id}/`, { token: session.accessToken })).status).toBe(401);
    expect((await call("GET", `/api/user/${session.user.id}/`, { token: String(first.json.access_token) })).status).toBe(401);
    expect((await refresh(session.client, String(first.json.refresh_token))).json).toEqual({ error: "invalid_grant" });
  });

  it("a chain of rotations keeps working while each token is used once", async () => {
    const session = await passwordSession();
    let current = session.refreshToken;
    for (let i = 0; i < 5; i++) {
      const res = await refresh(session.client, current);
      expect(res.status).toBe(200);
      current = String(res.json.refresh_token);
    }
  });

  it("may narrow the scope but never widen it, and the next refresh token keeps the original scopes", async () => {
    const session = await passwordSession("readonly");
    const widen = await refresh(session.client, session.refreshToken, { scope: "readwrite" });
    expect(widen.status).toBe(400);
    expect(widen.json).toEqual({ error: "invalid_scope" });

    const full = await passwordSession("readonly readwrite");
    const narrowed = await refresh(full.client, full.refreshToken, { scope: "readonly" });
    expect(narrowed.status).toBe(200);
    expect(narrowed.json.scopes).toEqual(["readonly"]);
    const again = await refresh(full.client, String(narrowed.json.refresh_token));
    expect(again.json.scopes).toEqual(["readonly", "readwrite"]);
  });

  it("refuses a refresh token of another client with invalid_grant, without consuming it", async () => {
    const session = await passwordSession();
    const other = await passwordSession();
    const res = await refresh(other.client, session.refreshToken);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "invalid_grant" });
    expect((await refresh(session.client, session.refreshToken)).status).toBe(200);
  });

  it("requires the client's own authentication on refresh", async () => {
    const session = await passwordSession();
    const res = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: session.refreshToken, client_id: session.client.client_id } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: "invalid_client" });
  });

  it("expires each refresh token 30 days after its own issue, not the first token's", async () => {
    const DAY = 24 * 3600 * 1000;
    const session = await passwordSession();
    advanceClock(30 * DAY - 60_000);
    const second = await refresh(session.client, session.refreshToken);
    expect(second.status).toBe(200);
    // A day short of 30 days after its own issue, long past the first token's expiry: still good.
    advanceClock(29 * DAY);
    const third = await refresh(session.client, String(second.json.refresh_token));
    expect(third.status, third.text).toBe(200);
    // Exactly 30 days after its own issue: expired.
    advanceClock(30 * DAY);
    const expired = await refresh(session.client, String(third.json.refresh_token));
    expect(expired.status).toBe(400);
    expect(expired.json).toEqual({ error: "invalid_grant" });
  });

  it("refuses an unknown refresh token and a missing one", async () => {
    const session = await passwordSession();
    expect((await refresh(session.client, "not-a-token")).json).toEqual({ error: "invalid_grant" });
    const missing = await call("POST", TOKEN, { body: { grant_type: "refresh_token", client_id: session.client.client_id, client_secret: session.client.client_secret } });
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ error: "invalid_request" });
  });

  it("is unauthorized_client for an implicit client", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id, grantType: "implicit" });
    const res = await refresh(client, "whatever");
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "unauthorized_client" });
  });
});
