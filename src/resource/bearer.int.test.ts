import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { authenticate } from "@/resource/authenticate";
import { ApiError } from "@/http/errors";
import { BASE, call } from "@/testing/app";
import { makeUser, passwordSession } from "@/testing/factories";

/** What authenticate() refused a request with (it may throw at once or reject: callers await it). */
async function refusal(request: Request, scope: "readonly" | "readwrite"): Promise<unknown> {
  try {
    await authenticate(request, scope);
    return null;
  } catch (error) {
    return error;
  }
}

afterEach(() => resetClock());

describe("bearer authentication on /api/user/<id>/", () => {
  it("answers the user themself with their e-mail", async () => {
    const { user, accessToken } = await passwordSession("readonly");
    const res = await call("GET", `/api/user/${user.id}/`, { token: accessToken });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: user.id, resource_uri: `/api/user/${user.id}/`, name: user.name, email: user.email });
  });

  it("answers another user without the e-mail, with or without the trailing slash", async () => {
    const { accessToken } = await passwordSession("readonly");
    const other = await makeUser({ name: "Other" });
    for (const path of [`/api/user/${other.id}/`, `/api/user/${other.id}`]) {
      const res = await call("GET", path, { token: accessToken });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ id: other.id, resource_uri: `/api/user/${other.id}/`, name: "Other" });
    }
  });

  it("is 404 for an unknown or malformed id", async () => {
    const { accessToken } = await passwordSession("readonly");
    for (const id of ["999999999", "abc", "-1"]) {
      const res = await call("GET", `/api/user/${id}/`, { token: accessToken });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: "no such user" });
    }
  });

  it("is 401 with a bare Bearer challenge when no token is sent", async () => {
    const { user } = await passwordSession("readonly");
    const res = await call("GET", `/api/user/${user.id}/`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api", DPoP realm="api", algs="ES256 RS256", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api"');
    expect(res.json).toEqual({ error: "authentication required" });
  });

  it("is 401 invalid_token for an unknown token, a malformed header or an expired token", async () => {
    const { user, accessToken } = await passwordSession("readonly");
    for (const authorization of ["Bearer not-a-real-token", "Bearer", "Bearer a b", `Token ${accessToken}`]) {
      const res = await call("GET", `/api/user/${user.id}/`, { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api", error="invalid_token", DPoP realm="api", algs="ES256 RS256", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api"');
      expect(res.json).toEqual({ error: "invalid or expired token" });
    }
    advanceClock(3600 * 1000 + 1000);
    const expired = await call("GET", `/api/user/${user.id}/`, { token: accessToken });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toBe('Bearer realm="api", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api", error="invalid_token", DPoP realm="api", algs="ES256 RS256", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api"');
  });

  it("never authenticates with a token in the query string", async () => {
    const { user, accessToken } = await passwordSession("readonly");
    const res = await call("GET", `/api/user/${user.id}/?access_token=${accessToken}`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api", DPoP realm="api", algs="ES256 RS256", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api"');
    expect(res.json).toEqual({ error: "authentication required" });
  });

  it.each([
    ["a JSON body", "application/json", (token: string) => JSON.stringify({ name: "Not mine", access_token: token })],
    ["JSON sent as text/plain", "text/plain;charset=UTF-8", (token: string) => JSON.stringify({ name: "Not mine", access_token: token })],
    ["a form body", "application/x-www-form-urlencoded", (token: string) => new URLSearchParams({ name: "Not mine", access_token: token }).toString()],
  ])("never authenticates with a token in %s (RFC 6750 2.2 is not offered), and creates nothing", async (_name, type, body) => {
    const { user, accessToken } = await passwordSession("readonly readwrite");
    const res = await call("POST", "/api/bundle/", { headers: { "content-type": type }, raw: body(accessToken) });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api", DPoP realm="api", algs="ES256 RS256", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api"');
    expect(res.json).toEqual({ error: "authentication required" });
    const query = await call("POST", `/api/bundle/?access_token=${accessToken}`, { body: { name: "Not mine" } });
    expect({ status: query.status, body: query.json }).toEqual({ status: 401, body: { error: "authentication required" } });
    const { db } = await import("@/db/client");
    expect(await (await db()).bundle.count({ where: { ownerId: user.id } })).toBe(0);
  });

  it("answers 403 insufficient_scope when the token lacks the scope", async () => {
    const { accessToken } = await passwordSession("readonly");
    const request = new Request(BASE + "/api/x", { headers: { authorization: `Bearer ${accessToken}` } });
    const error = await refusal(request, "readwrite");
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(403);
    expect((error as ApiError).headers["WWW-Authenticate"]).toBe('Bearer realm="api", error="insufficient_scope", scope="readwrite"');
    expect((error as ApiError).error).toBe("this token lacks the readwrite scope");
    // readwrite covers readonly.
    const rw = await passwordSession("readwrite");
    const ok = await authenticate(new Request(BASE + "/api/x", { headers: { authorization: `Bearer ${rw.accessToken}` } }), "readonly");
    expect(ok.userId).toBe(rw.user.id);
  });

  it("answers CORS for bearer requests, preflight included", async () => {
    const { user, accessToken } = await passwordSession("readonly");
    const res = await call("GET", `/api/user/${user.id}/`, { token: accessToken, headers: { origin: "https://app.example" } });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const preflight = await call("OPTIONS", `/api/user/${user.id}/`, {
      headers: { origin: "https://app.example", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type, DPoP");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("GET");
  });

  it("answers a method that is not on the path with 405 and Allow", async () => {
    const { user, accessToken } = await passwordSession("readonly");
    const res = await call("POST", `/api/user/${user.id}/`, { token: accessToken, body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, OPTIONS, HEAD");
    expect(res.json).toEqual({ error: "method not allowed" });
  });

  it("answers unknown /api paths with a JSON 404", async () => {
    const res = await call("GET", "/api/no/such/thing/");
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: "no such endpoint" });
  });
});

describe("session-cookie authentication for the service's own pages", () => {
  it("reads with the session cookie, and refuses a cross-origin write with 403", async () => {
    const { sessionCookie } = await import("@/testing/session");
    const user = await makeUser();
    const cookie = await sessionCookie(user);
    const read = await call("GET", `/api/user/${user.id}/`, { headers: { cookie } });
    expect(read.status).toBe(200);
    expect(read.json.email).toBe(user.email);
    // No CORS for cookie-authenticated requests.
    expect(read.headers.get("access-control-allow-origin")).toBeNull();

    const crossOrigin = new Request(BASE + "/api/x", { method: "POST", headers: { cookie, origin: "https://evil.example" } });
    const error = await refusal(crossOrigin, "readwrite");
    expect((error as ApiError).status).toBe(403);
    expect((error as ApiError).error).toBe("cross-origin request refused: send a bearer token");
    // A write without any Origin is refused too; reads need none.
    const noOrigin = await refusal(new Request(BASE + "/api/x", { method: "DELETE", headers: { cookie } }), "readwrite");
    expect((noOrigin as ApiError).status).toBe(403);
    for (const method of ["GET", "HEAD", "OPTIONS"]) {
      expect((await authenticate(new Request(BASE + "/api/x", { method, headers: { cookie, origin: "https://evil.example" } }), "readonly")).via).toBe("session");
    }
    const sameOrigin = new Request(BASE + "/api/x", { method: "POST", headers: { cookie, origin: BASE } });
    expect((await authenticate(sameOrigin, "readwrite")).via).toBe("session");
  });

  it("ignores a forged or stale session cookie", async () => {
    const { sessionCookie } = await import("@/testing/session");
    const user = await makeUser();
    const forged = await call("GET", `/api/user/${user.id}/`, { headers: { cookie: "next-auth.session-token=forged" } });
    expect(forged.status).toBe(401);
    const stale = await call("GET", `/api/user/${user.id}/`, { headers: { cookie: await sessionCookie(user, 5) } });
    expect(stale.status).toBe(401);
  });
});
