// What a password grant asks the database (RFC 6749 4.3; docs/rules/accounts.md#limits): the limiter's
// reservation brings the resource owner with it, so that on PostgreSQL the grant makes two round trips besides
// its hash (the reservation with the user, then the grant's commit), a refused attempt one, whose rate_limited
// event names the owner from that same read; an unknown e-mail still costs one hash verification. The
// statements are counted by src/db/fast-sql.ts's test hook (every statement it sends to PostgreSQL, by name);
// the client's own lookup (client authentication, RFC 6749 2.3.1) is left out of the count.
import { afterEach, describe, expect, it } from "vitest";
import { db } from "@/db/client";
import { fastSqlHooks } from "@/db/fast-sql";
import { env } from "@/env";
import { call } from "@/testing/app";
import { countHashWork } from "@/testing/hash-work";
import { makeClient, makeUser, uniqueEmail } from "@/testing/factories";

const TOKEN = "/api/connect/oauth2/token/";
const onPostgres = env().database.kind === "postgresql";

afterEach(() => {
  fastSqlHooks.onPgStatement = undefined;
});

/** Sends a password grant; the statements it sent to PostgreSQL (none on SQLite), the client's lookup aside. */
async function grant(client: { client_id: string; client_secret: string | null }, username: string, password: string) {
  const statements: string[] = [];
  fastSqlHooks.onPgStatement = (name) => statements.push(name);
  try {
    const { result, work } = await countHashWork(() =>
      call("POST", TOKEN, { body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username, password } }),
    );
    return { status: result.status, json: result.json, verifications: work.verifications, statements: statements.filter((name) => name !== "client") };
  } finally {
    fastSqlHooks.onPgStatement = undefined;
  }
}

describe("the password grant's statements", () => {
  it("the right password: the reservation with the user, then the grant (two statements on PostgreSQL)", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const right = await grant(client, owner.email, owner.password);
    expect({ status: right.status, verifications: right.verifications }).toEqual({ status: 200, verifications: 1 });
    expect(right.statements).toEqual(onPostgres ? ["reserveSlotsWithUser", "startGrant"] : []);
    // The right password's slot went back with the grant: nothing is counted for it.
    expect(await (await db()).failedAttempt.count({ where: { key: `password:${client.client_id}:${owner.email}` } })).toBe(0);
  });

  it("a wrong password and an unknown e-mail: one statement each, and one hash verification each", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const wrong = await grant(client, owner.email, "wrong password");
    const unknown = await grant(client, uniqueEmail("nobody"), "whatever password");
    for (const failed of [wrong, unknown]) {
      expect({ status: failed.status, json: failed.json, verifications: failed.verifications }).toEqual({ status: 400, json: { error: "invalid_grant" }, verifications: 1 });
      expect(failed.statements).toEqual(onPostgres ? ["reserveSlotsWithUser"] : []);
    }
  });

  it("refused by the limit: one statement, no hash, and the rate_limited event names the owner it read", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    for (let i = 0; i < 10; i++) expect((await grant(client, owner.email, `wrong password ${i}`)).status).toBe(400);
    const refused = await grant(client, owner.email, owner.password);
    expect({ status: refused.status, json: refused.json, verifications: refused.verifications }).toEqual({ status: 429, json: { error: "rate_limited" }, verifications: 0 });
    expect(refused.statements).toEqual(onPostgres ? ["reserveSlotsWithUser"] : []);
    const events = await (await db()).auditEvent.findMany({ where: { type: "rate_limited", clientId: client.client_id } });
    expect(events.map((event) => ({ userId: event.userId, detail: JSON.parse(event.detail!) as unknown }))).toEqual([{ userId: owner.id, detail: { limit: "password grant" } }]);
  });
});
