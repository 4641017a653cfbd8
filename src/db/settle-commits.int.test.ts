// settleCommits() (src/db/pg-token-cache.ts, rule 3 of its lease) holds back only what it must: on a
// connection of the test's own, as an instance's pool connection, with a hold that counts instead of the
// STALENESS_MS wait. The rest of what it holds back is src/db/pg-token-cache-lease.int.test.ts. On SQLite
// there is nothing to test and these say so.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { env } from "@/env";
import { holdCommitsWith, settleCommits } from "@/db/pg-token-cache";

const onPostgres = env().database.kind === "postgresql";
let client: pg.Client;
let holds = 0;
beforeAll(async () => {
  if (!onPostgres) return;
  holdCommitsWith(async () => void holds++);
  client = new pg.Client({ connectionString: (env().database as { url: string }).url });
  await client.connect();
  settleCommits(client);
});
afterEach(() => {
  holds = 0;
});
afterAll(async () => {
  holdCommitsWith(null);
  await client?.end();
});

describe.skipIf(!onPostgres)("settleCommits(): nothing held that invalidated nothing", () => {
  it("a new connection's first statement is not held", async () => {
    await client.query("SELECT 1");
    expect(holds).toBe(0);
  });

  it("a notice other than the caches' holds nothing", async () => {
    const notices: string[] = [];
    client.on("notice", (notice) => notices.push(notice.message ?? ""));
    await client.query(`DO $$ BEGIN RAISE NOTICE 'something else'; END $$`);
    expect(notices).toEqual(["something else"]);
    expect(holds).toBe(0);
  });
});
