// settleCommits() (src/db/pg-token-cache.ts, rule 3 of its lease) holds back only what it must: on a
// connection of the test's own, as an instance's pool connection, with a hold that counts instead of the
// STALENESS_MS wait. The rest of what it holds back is src/db/pg-token-cache-lease.int.test.ts. On SQLite
// there is nothing to test and these say so.
import { afterEach, describe, expect, it } from "vitest";
import pg from "pg";
import { env } from "@/env";
import { holdCommitsWith, settleCommits } from "@/db/pg-token-cache";

const onPostgres = env().database.kind === "postgresql";
let holds = 0;
afterEach(() => {
  holdCommitsWith(null);
  holds = 0;
});

/** A new connection whose commits settleCommits() holds back, each hold counted; made inside the test. */
async function connection(): Promise<pg.Client> {
  holdCommitsWith(async () => void holds++);
  const client = new pg.Client({ connectionString: (env().database as { url: string }).url });
  await client.connect();
  settleCommits(client);
  return client;
}

describe.skipIf(!onPostgres)("settleCommits(): nothing held that invalidated nothing", () => {
  it("a new connection's first statement is not held", async () => {
    const client = await connection();
    try {
      await client.query("SELECT 1");
      expect(holds).toBe(0);
    } finally {
      await client.end();
    }
  });

  it("a notice other than the caches' holds nothing", async () => {
    const client = await connection();
    try {
      const notices: string[] = [];
      client.on("notice", (notice) => notices.push(notice.message ?? ""));
      await client.query(`DO $$ BEGIN RAISE NOTICE 'something else'; END $$`);
      expect(notices).toEqual(["something else"]);
      expect(holds).toBe(0);
    } finally {
      await client.end();
    }
  });
});
