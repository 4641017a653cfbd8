// GET /api/metrics (docs/rules/operations.md#metrics): behind METRICS_TOKEN, the Prometheus text format with
// requests by route pattern (never the raw path: no token in a label) and status, latency histograms, tokens
// issued by grant, the outbox by status and database errors. Requests go over a real socket through the
// production fast lane, which is what counts them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const METRICS_TOKEN = "metrics-token-for-the-tests-0123456789";

describe("GET /api/metrics with METRICS_TOKEN", () => {
  let server: { url: string; close: () => Promise<void> };
  let factories: typeof import("@/testing/factories");

  beforeAll(async () => {
    process.env.METRICS_TOKEN = METRICS_TOKEN; // read once, at this worker's first env()
    const app = await import("@/testing/app");
    factories = await import("@/testing/factories");
    server = await app.startServer();
  });
  afterAll(() => server.close());

  const scrape = (authorization?: string) => fetch(`${server.url}/api/metrics`, { headers: authorization ? { authorization } : {} });

  it("refuses a scrape without the token, or with another, in a 401 that names the scheme", async () => {
    const missing = await scrape();
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: "unauthorized" });
    expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    const wrong = await scrape(`Bearer ${METRICS_TOKEN}x`);
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: "invalid_token" });
    const basic = await scrape(`Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString("base64")}`);
    expect(basic.status).toBe(401);
  });

  it("counts requests by route pattern and status, tokens by grant, and never shows a token", async () => {
    const user = await factories.makeUser();
    const client = await factories.makeClient({ ownerId: user.id });
    const grant = await fetch(`${server.url}/api/connect/oauth2/token/`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "password", client_id: client.client_id, client_secret: client.client_secret!, username: user.email, password: user.password }),
    });
    expect(grant.status).toBe(200);
    const { access_token: accessToken, refresh_token: refreshToken } = (await grant.json()) as { access_token: string; refresh_token: string };
    const read = await fetch(`${server.url}/api/user/${user.id}/`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(read.status).toBe(200);
    const revoke = await fetch(`${server.url}/api/oauth2token/${accessToken}/`, { method: "DELETE" });
    expect(revoke.status).toBe(204);

    const response = await scrape(`Bearer ${METRICS_TOKEN}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain('oauth_tokens_issued_total{grant_type="password"} 1');
    expect(text).toContain('http_requests_total{route="/api/connect/oauth2/token",method="POST",status="200"} 1');
    expect(text).toContain('http_requests_total{route="/api/user/[id]",method="GET",status="200"} 1');
    expect(text).toContain('http_requests_total{route="/api/oauth2token/[token]",method="DELETE",status="204"} 1');
    expect(text).toContain('http_requests_total{route="/api/metrics",method="GET",status="401"} 3');
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="\+Inf",route="\/api\/user\/\[id\]",method="GET"\} 1/);
    expect(text).toMatch(/mail_outbox_messages\{status="pending"\} \d+/);
    expect(text).toContain("# TYPE database_errors_total counter");
    expect(text).toContain("process_cpu_seconds_total");
    expect(text).not.toContain(accessToken);
    expect(text).not.toContain(refreshToken);
    expect(text).not.toContain(client.client_secret!);
  });
});
