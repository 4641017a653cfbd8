// A database outage on SQLite (docs/rules/operations.md#database-outages): a database file that cannot be
// opened is a 503 with Retry-After and a JSON error (never a 500), and the service recovers by itself once the
// file can be opened: the connection is made again on the next request. Runs on every suite (its own file,
// whatever TEST_DATABASE_URL is).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("an SQLite file that cannot be opened", () => {
  const dir = mkdtempSync(join(tmpdir(), "outage-sqlite-"));
  const file = join(dir, "app.db");
  let app: typeof import("@/testing/app");

  beforeAll(async () => {
    mkdirSync(file); // a directory where the database file should be: SQLITE_CANTOPEN
    process.env.DATABASE_URL = `file:${file}`; // read once, at this worker's first env()
    app = await import("@/testing/app");
  });

  afterAll(async () => {
    await (await import("@/db/client")).disconnectDb();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers 503 with Retry-After while the file cannot be opened, then recovers without a restart", async () => {
    const ready = await app.call("GET", "/api/ready");
    expect(ready.status).toBe(503);
    expect(ready.json).toEqual({ error: "database unavailable" });
    expect(ready.headers.get("retry-after")).toBe("5");
    const read = await app.call("GET", "/api/user/1/", { token: "a".repeat(43) });
    expect(read.status).toBe(503);
    expect(read.json).toEqual({ error: "database unavailable" });
    const token = await app.call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "client_credentials", client_id: "nobody", client_secret: "x" } });
    expect(token.status).toBe(503);
    expect(token.json).toEqual({ error: "temporarily_unavailable" });

    rmSync(file, { recursive: true }); // the file can be made now
    const back = await app.call("GET", "/api/ready");
    expect(back.status).toBe(200);
    expect(back.json).toEqual({ status: "ok", database: "ok" });
  });
});
