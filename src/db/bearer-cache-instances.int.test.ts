// A token deleted or revoked on any instance is refused by every instance on its next request
// (docs/design.md). Each instance keeps the live tokens it has read: on SQLite until anything is committed
// (src/db/fast-sql.ts), on PostgreSQL under a lease (src/db/pg-token-cache.ts). Two instances run as
// two processes on the test database: instance A answers a token until it answers it from its cache (its
// token_cache_hits_total grows), instance B revokes or deletes it, and A's very next answer is 401. A change
// to the user made by a third process (this one) shows on A's next answer too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/db/client";
import { passwordSession } from "@/testing/factories";
import { startInstance, type Instance } from "@/testing/instance";

const METRICS_TOKEN = "metrics-token-for-the-cache-test";
let instances: Instance[] = [];
beforeAll(async () => {
  instances = await Promise.all([startInstance({ env: { METRICS_TOKEN } }), startInstance({ env: { METRICS_TOKEN } })]);
}, 120_000);
afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
});

async function read(instance: Instance, userId: number, token: string) {
  const response = await fetch(`${instance.url}/api/user/${userId}/`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function cacheHits(instance: Instance): Promise<number> {
  const text = await (await fetch(`${instance.url}/api/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return Number(/^token_cache_hits_total (\d+)$/m.exec(text)?.[1]);
}

/** Reads the token at `instance` until the instance answers it from its cache (at most 10 s). */
async function cachedAt(instance: Instance, userId: number, token: string) {
  const before = await cacheHits(instance);
  const started = Date.now();
  do {
    expect((await read(instance, userId, token)).status).toBe(200);
    if (Date.now() - started > 10_000) throw new Error("the instance never answered from its cache");
  } while ((await cacheHits(instance)) === before);
}

describe("a bearer token changed on one instance, read on another", () => {
  it("revoked at B (RFC 7009): A refuses it on its next request", async () => {
    const [a, b] = instances as [Instance, Instance];
    const s = await passwordSession();
    await cachedAt(a, s.user.id, s.accessToken);
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
    await cachedAt(a, s.user.id, s.accessToken);
    expect((await fetch(`${b.url}/api/accesstoken/${s.accessToken}`, { method: "DELETE" })).status).toBe(204);
    expect(await read(a, s.user.id, s.accessToken)).toEqual({ status: 401, body: { error: "invalid or expired token" } });
  }, 60_000);

  it("the user renamed by another process: A's next answer has the new name", async () => {
    const [a] = instances as [Instance];
    const s = await passwordSession();
    await cachedAt(a, s.user.id, s.accessToken);
    expect((await read(a, s.user.id, s.accessToken)).body.name).toBe("Test User");
    await (await db()).user.update({ where: { id: s.user.id }, data: { name: "Renamed Elsewhere" } });
    expect(await read(a, s.user.id, s.accessToken)).toMatchObject({ status: 200, body: { id: s.user.id, name: "Renamed Elsewhere" } });
  }, 60_000);
});
