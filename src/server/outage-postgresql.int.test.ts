// A database outage on PostgreSQL (docs/rules/operations.md#database-outages): a database that cannot be
// reached (connection refused, never answering, connections dropped) or a statement that cannot finish is a
// 503 with Retry-After and a JSON error, never a 500 or a hang; the service recovers by itself when the
// database is back. The app talks to the test database through a TCP proxy (src/testing/tcp-proxy.ts) that
// plays each outage. Runs when the suite runs on PostgreSQL (TEST_DATABASE_URL=postgresql://...).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { startTcpProxy, type TcpProxy } from "@/testing/tcp-proxy";

const realUrl = process.env.DATABASE_URL ?? "";
const onPostgres = realUrl.startsWith("postgres");

describe.runIf(onPostgres)("a PostgreSQL outage", () => {
  let proxy: TcpProxy;
  let app: typeof import("@/testing/app");
  let session: Awaited<ReturnType<typeof import("@/testing/factories").passwordSession>>;

  beforeAll(async () => {
    const url = new URL(realUrl);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    process.env.DATABASE_URL = url.href; // read once, at this worker's first env(): everything below goes through the proxy
    app = await import("@/testing/app");
    const factories = await import("@/testing/factories");
    session = await factories.passwordSession();
  });

  afterAll(async () => {
    await (await import("@/db/client")).disconnectDb();
    await proxy.close();
  });

  async function expectUnavailable() {
    const ready = await app.call("GET", "/api/ready");
    expect(ready.status).toBe(503);
    expect(ready.json).toEqual({ error: "database unavailable" });
    expect(ready.headers.get("retry-after")).toBe("5");
    const read = await app.call("GET", `/api/user/${session.user.id}/`, { token: session.accessToken });
    expect(read.status).toBe(503);
    expect(read.json).toEqual({ error: "database unavailable" });
    expect(read.headers.get("retry-after")).toBe("5");
    const token = await app.call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "refresh_token", refresh_token: session.refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret },
    });
    expect(token.status).toBe(503);
    expect(token.json).toEqual({ error: "temporarily_unavailable" });
    expect(token.headers.get("retry-after")).toBe("5");
  }

  async function expectRecovered() {
    const ready = await app.call("GET", "/api/ready");
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: "ok", database: "ok" });
    const read = await app.call("GET", `/api/user/${session.user.id}/`, { token: session.accessToken });
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ id: session.user.id, email: session.user.email });
  }

  it("answers 503 while connections are refused, and recovers by itself when the database is back", async () => {
    await expectRecovered(); // the pool holds live connections now
    await proxy.setMode("refuse");
    await expectUnavailable();
    await proxy.setMode("forward");
    await expectRecovered();
  });

  it("answers 503 when the database accepts connections but never answers (a bounded connect)", async () => {
    await proxy.setMode("blackhole");
    await expectUnavailable();
    await proxy.setMode("forward");
    await expectRecovered();
  });

  it("answers 503 when the database drops every connection", async () => {
    await proxy.setMode("drop");
    await expectUnavailable();
    await proxy.setMode("forward");
    await expectRecovered();
  });

  it("answers 503 when a statement cannot finish (a row lock held elsewhere: statement_timeout)", async () => {
    const other = new pg.Client({ connectionString: realUrl });
    await other.connect();
    try {
      await other.query("BEGIN");
      // Revocation locks the grant row first (src/oauth/tokens.ts): held here, it waits until statement_timeout.
      await other.query(`SELECT 1 FROM "Grant" WHERE "userId" = $1 FOR UPDATE`, [session.user.id]);
      const held = await app.call("DELETE", `/api/oauth2token/${session.accessToken}/`);
      expect(held.status).toBe(503);
      expect(held.json).toEqual({ error: "database unavailable" });
      expect(held.headers.get("retry-after")).toBe("5");
    } finally {
      await other.query("ROLLBACK").catch(() => {});
      await other.end();
    }
    await expectRecovered();
  });
});
