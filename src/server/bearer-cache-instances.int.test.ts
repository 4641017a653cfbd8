// Issue 8: "a token deleted or revoked on any instance must be refused by every instance on its next
// request". On SQLite each instance keeps the live tokens it has read until anything is committed
// (src/server/fast-sql.ts); on PostgreSQL every bearer read is a lookup. Two instances run as two processes
// on the test database: instance A answers a token (so that, on SQLite, A holds it), instance B revokes or
// deletes it, and A's very next answer is 401. A change to the user made by a third process (this one) shows
// on A's next answer too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/server/db";
import { passwordSession } from "@/testing/factories";
import { startInstance, type Instance } from "@/testing/instance";

let instances: Instance[] = [];
beforeAll(async () => {
  instances = await Promise.all([startInstance(), startInstance()]);
}, 120_000);
afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
});

async function read(instance: Instance, userId: number, token: string) {
  const response = await fetch(`${instance.url}/api/user/${userId}/`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("a bearer token changed on one instance, read on another", () => {
  it("revoked at B (RFC 7009): A refuses it on its next request", async () => {
    const [a, b] = instances as [Instance, Instance];
    const s = await passwordSession();
    for (let i = 0; i < 3; i++) expect((await read(a, s.user.id, s.accessToken)).status).toBe(200);
    const revoked = await fetch(`${b.url}/api/connect/oauth2/revoke/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: s.accessToken, client_id: s.client.client_id, client_secret: s.client.client_secret }),
    });
    expect(revoked.status).toBe(200);
    expect(await read(a, s.user.id, s.accessToken)).toEqual({ status: 401, body: { error: "invalid or expired token" } });
  }, 60_000);

  it("deleted at B (DELETE /api/accesstoken/<token>): A refuses it on its next request", async () => {
    const [a, b] = instances as [Instance, Instance];
    const s = await passwordSession();
    for (let i = 0; i < 3; i++) expect((await read(a, s.user.id, s.accessToken)).status).toBe(200);
    expect((await fetch(`${b.url}/api/accesstoken/${s.accessToken}`, { method: "DELETE" })).status).toBe(204);
    expect(await read(a, s.user.id, s.accessToken)).toEqual({ status: 401, body: { error: "invalid or expired token" } });
  }, 60_000);

  it("the user renamed by another process: A's next answer has the new name", async () => {
    const [a] = instances as [Instance];
    const s = await passwordSession();
    expect((await read(a, s.user.id, s.accessToken)).body.name).toBe("Test User");
    expect((await read(a, s.user.id, s.accessToken)).body.name).toBe("Test User");
    await (await db()).user.update({ where: { id: s.user.id }, data: { name: "Renamed Elsewhere" } });
    expect(await read(a, s.user.id, s.accessToken)).toMatchObject({ status: 200, body: { id: s.user.id, name: "Renamed Elsewhere" } });
  }, 60_000);
});
