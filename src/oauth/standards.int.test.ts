import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";

afterEach(() => resetClock());

const form = (params: Record<string, string>) => ({
  headers: { "content-type": "application/x-www-form-urlencoded" },
  raw: new URLSearchParams(params).toString(),
});

describe("RFC 8414 metadata", () => {
  it("describes every endpoint and capability, cacheable, from APP_URL", async () => {
    const res = await call("GET", "/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.json).toEqual({
      issuer: "http://localhost:3000",
      authorization_endpoint: "http://localhost:3000/api/connect/oauth2/auth/",
      token_endpoint: "http://localhost:3000/api/connect/oauth2/token/",
      revocation_endpoint: "http://localhost:3000/api/connect/oauth2/revoke/",
      introspection_endpoint: "http://localhost:3000/api/connect/oauth2/introspect/",
      device_authorization_endpoint: "http://localhost:3000/api/connect/oauth2/device/",
      pushed_authorization_request_endpoint: "http://localhost:3000/api/connect/oauth2/par/",
      jwks_uri: "http://localhost:3000/api/connect/oauth2/jwks/",
      grant_types_supported: ["authorization_code", "implicit", "password", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"],
      response_types_supported: ["code", "token"],
      response_modes_supported: ["query", "fragment"],
      scopes_supported: ["readonly", "readwrite", "openid", "profile", "email"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
      token_endpoint_auth_signing_alg_values_supported: ["RS256", "ES256"],
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
      revocation_endpoint_auth_signing_alg_values_supported: ["RS256", "ES256"],
      introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt"],
      introspection_endpoint_auth_signing_alg_values_supported: ["RS256", "ES256"],
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
      require_pushed_authorization_requests: false,
      dpop_signing_alg_values_supported: ["ES256", "RS256"],
      client_id_metadata_document_supported: true,
      service_documentation: "http://localhost:3000/docs",
    });
  });
});

describe("RFC 7009 revocation", () => {
  it("revoking a refresh token revokes its whole grant", async () => {
    const s = await passwordSession();
    const res = await call("POST", "/api/connect/oauth2/revoke/", form({ token: s.refreshToken, token_type_hint: "refresh_token", client_id: s.client.client_id, client_secret: s.client.client_secret! }));
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: s.accessToken })).status).toBe(401);
  });

  it("revoking an access token ends that token; the refresh token still works", async () => {
    const s = await passwordSession();
    const res = await call("POST", "/api/connect/oauth2/revoke/", form({ token: s.accessToken, client_id: s.client.client_id, client_secret: s.client.client_secret! }));
    expect(res.status).toBe(200);
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: s.accessToken })).status).toBe(401);
    const refreshed = await call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "refresh_token", refresh_token: s.refreshToken, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect(refreshed.status).toBe(200);
  });

  it("answers 200 for an unknown token and with a wrong hint finds the token anyway", async () => {
    const s = await passwordSession();
    const auth = { client_id: s.client.client_id, client_secret: s.client.client_secret! };
    expect((await call("POST", "/api/connect/oauth2/revoke/", form({ token: "no-such-token", ...auth }))).status).toBe(200);
    expect((await call("POST", "/api/connect/oauth2/revoke/", form({ token: s.accessToken, token_type_hint: "refresh_token", ...auth }))).status).toBe(200);
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: s.accessToken })).status).toBe(401);
  });

  it("refuses another client's token with unauthorized_client and revokes nothing", async () => {
    const s = await passwordSession();
    const other = await passwordSession();
    const res = await call("POST", "/api/connect/oauth2/revoke/", form({ token: s.accessToken, client_id: other.client.client_id, client_secret: other.client.client_secret! }));
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "unauthorized_client" });
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: s.accessToken })).status).toBe(200);
  });

  it("requires client authentication and a token", async () => {
    const s = await passwordSession();
    expect((await call("POST", "/api/connect/oauth2/revoke/", form({ token: s.accessToken, client_id: s.client.client_id, client_secret: "wrong" }))).json).toEqual({ error: "invalid_client" });
    expect((await call("POST", "/api/connect/oauth2/revoke/", form({ client_id: s.client.client_id, client_secret: s.client.client_secret! }))).json).toEqual({ error: "invalid_request" });
  });
});

describe("RFC 7662 introspection", () => {
  const introspect = (s: Awaited<ReturnType<typeof passwordSession>>, token: string, hint?: string) =>
    call("POST", "/api/connect/oauth2/introspect/", form({ token, client_id: s.client.client_id, client_secret: s.client.client_secret!, ...(hint ? { token_type_hint: hint } : {}) }));

  it("describes an active access token of the client", async () => {
    const s = await passwordSession("readonly");
    const res = await introspect(s, s.accessToken);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = res.json as Record<string, unknown>;
    expect(body).toMatchObject({ active: true, scope: "readonly", client_id: s.client.client_id, username: s.user.email, token_type: "Bearer", sub: String(s.user.id), iss: "http://localhost:3000" });
    expect(Number(body.exp) - Number(body.iat)).toBe(3600);
  });

  it("describes a refresh token, and reports it inactive once used", async () => {
    const s = await passwordSession();
    expect((await introspect(s, s.refreshToken, "refresh_token")).json).toMatchObject({ active: true, token_type: "refresh_token" });
    await call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "refresh_token", refresh_token: s.refreshToken, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect((await introspect(s, s.refreshToken)).json).toEqual({ active: false });
  });

  it("is inactive for unknown, expired and revoked tokens, and for another client's tokens", async () => {
    const s = await passwordSession();
    const other = await passwordSession();
    expect((await introspect(s, "unknown")).json).toEqual({ active: false });
    expect((await introspect(other, s.accessToken)).json).toEqual({ active: false });
    advanceClock(3601_000);
    expect((await introspect(s, s.accessToken)).json).toEqual({ active: false });
    resetClock();
    await call("DELETE", `/api/accesstoken/${s.accessToken}`);
    expect((await introspect(s, s.refreshToken)).json).toEqual({ active: false });
  });

  it("requires a client secret: a bare client_id is invalid_client", async () => {
    const s = await passwordSession();
    const res = await call("POST", "/api/connect/oauth2/introspect/", form({ token: s.accessToken, client_id: s.client.client_id }));
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: "invalid_client" });
  });
});

describe("CORS on the OAuth endpoints", () => {
  it.each(["/api/connect/oauth2/token/", "/api/connect/oauth2/revoke/", "/api/connect/oauth2/introspect/"])("answers a preflight for %s naming Authorization, Content-Type and DPoP", async (path) => {
    const res = await call("OPTIONS", path, { headers: { origin: "https://spa.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" } });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    expect(res.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type, DPoP");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("answers token responses to any origin", async () => {
    const s = await passwordSession();
    const res = await call("POST", "/api/connect/oauth2/token/", {
      headers: { origin: "https://spa.example" },
      body: { grant_type: "refresh_token", refresh_token: s.refreshToken, client_id: s.client.client_id, client_secret: s.client.client_secret },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});
