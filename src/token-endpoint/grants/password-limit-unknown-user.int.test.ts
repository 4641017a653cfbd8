// The password grant's failed-attempt limit (docs/rules/accounts.md#limits) counts per client and username,
// also for a username that names nobody: after 10 failures the 11th attempt is 429 rate_limited, recorded as a
// rate_limited event with no user (there is none) and the client.
import { describe, expect, it } from "vitest";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";

describe("the password grant's limit for a username that names nobody", () => {
  it("is reached after 10 failures: 429 rate_limited, recorded without a user", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const attempt = () =>
      call("POST", "/api/connect/oauth2/token/", {
        body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: "nobody@example.test", password: "whatever" },
      });
    for (let i = 0; i < 10; i++) expect((await attempt()).json).toEqual({ error: "invalid_grant" });
    const limited = await attempt();
    expect({ status: limited.status, body: limited.json }).toEqual({ status: 429, body: { error: "rate_limited" } });
    const events = await (await db()).auditEvent.findMany({ where: { type: "rate_limited", clientId: client.client_id } });
    expect(events.map((event) => ({ userId: event.userId, detail: JSON.parse(event.detail!) as unknown }))).toEqual([{ userId: null, detail: { limit: "password grant" } }]);
  });
});
