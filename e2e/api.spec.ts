// The production build answers /api paths with and without the trailing slash directly (no 308), and
// answers JSON on every path, including unknown ones (docs/rules/endpoints.md#paths,
// docs/rules/endpoints.md#json-only).
import { expect, test } from "@playwright/test";
import { baseURL } from "./env";

test("health and readiness", async ({ request }) => {
  const health = await request.get("/api/health");
  expect(health.status()).toBe(200);
  expect(await health.json()).toEqual({ status: "ok" });
  const ready = await request.get("/api/ready/");
  expect(ready.status()).toBe(200);
  expect(await ready.json()).toEqual({ status: "ok", database: "ok" });
});

test("paths answer with and without the trailing slash, without redirects", async ({ request }) => {
  for (const path of ["/api/connect/oauth2/token", "/api/connect/oauth2/token/"]) {
    const res = await request.post(path, { data: { grant_type: "password" }, maxRedirects: 0 });
    expect(res.status(), path).toBe(401);
    expect(await res.json()).toEqual({ error: "invalid_client" });
  }
  for (const path of ["/api/user/1", "/api/user/1/"]) {
    const res = await request.get(path, { maxRedirects: 0 });
    expect(res.status(), path).toBe(401);
    const metadata = `resource_metadata="${baseURL}/.well-known/oauth-protected-resource/api"`;
    expect(res.headers()["www-authenticate"]).toBe(`Bearer realm="api", ${metadata}, DPoP realm="api", algs="ES256 RS256", ${metadata}`);
  }
  for (const path of ["/api/accesstoken/unknown", "/api/oauth2token/unknown/"]) {
    const res = await request.delete(path, { maxRedirects: 0 });
    expect(res.status(), path).toBe(404);
    expect(await res.json()).toEqual({ error: "no such token" });
  }
});

test("unknown /api paths and wrong methods answer JSON", async ({ request }) => {
  const unknown = await request.get("/api/does/not/exist/");
  expect(unknown.status()).toBe(404);
  expect(await unknown.json()).toEqual({ error: "no such endpoint" });
  const wrongMethod = await request.get("/api/connect/oauth2/token/");
  expect(wrongMethod.status()).toBe(405);
  expect(wrongMethod.headers()["allow"]).toBe("POST, OPTIONS");
});
