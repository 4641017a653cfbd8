// A collection page kept by one instance shows a change made on another in its very next answer
// (docs/design.md#the-page-cache): on SQLite every instance asks data_version, on PostgreSQL the page
// triggers notify every instance under the token cache's lease (src/db/page-cache.ts). Two instances run as
// two processes on the test database: instance A answers the owner's requests until it answers them from its
// cache (its page_cache_hits_total grows), instance B withdraws the request through the API, and A's very
// next answer reads "withdrawn". A rename made by a third process (this one) shows on A's next answer too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/db/client";
import { startInstance, type Instance } from "@/testing/instance";
import { bearer, pendingRequest } from "@/testing/permission-request-fixtures";

const METRICS_TOKEN = "metrics-token-for-the-page-cache-test";
const REQUESTS = "/api/bundle_permission_request/";
let instances: Instance[] = [];
beforeAll(async () => {
  instances = await Promise.all([startInstance({ env: { METRICS_TOKEN } }), startInstance({ env: { METRICS_TOKEN } })]);
}, 120_000);
afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
});

type Page = { objects: Array<{ id: number; status: string; requested_by: { name: string } }> };

async function read(instance: Instance, token: string): Promise<Page> {
  const response = await fetch(`${instance.url}${REQUESTS}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
}

async function pageHits(instance: Instance): Promise<number> {
  const text = await (await fetch(`${instance.url}/api/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return Number(/^page_cache_hits_total (\d+)$/m.exec(text)?.[1]);
}

/** Reads the page at `instance` until the instance answers it from its cache (at most 10 s). */
async function keptAt(instance: Instance, token: string): Promise<Page> {
  const started = Date.now();
  for (;;) {
    const before = await pageHits(instance);
    const page = await read(instance, token);
    if ((await pageHits(instance)) > before) return page;
    if (Date.now() - started > 10_000) throw new Error("the instance never answered the page from its cache");
  }
}

describe("a collection page changed on one instance, read on another", () => {
  it("a request withdrawn at B: A's next page reads it withdrawn", async () => {
    const [a, b] = instances as [Instance, Instance];
    const request = await pendingRequest();
    const [ownerToken, requesterToken] = await Promise.all([bearer(request.owner), bearer(request.requester)]);
    expect((await keptAt(a, ownerToken)).objects[0]).toMatchObject({ id: request.id, status: "pending" });
    const withdrawn = await fetch(`${b.url}${request.path}`, { method: "DELETE", headers: { authorization: `Bearer ${requesterToken}` } });
    expect(withdrawn.status).toBe(204);
    expect((await read(a, ownerToken)).objects[0]).toMatchObject({ id: request.id, status: "withdrawn" });
  }, 60_000);

  it("the requester renamed by another process: A's next page has the new name", async () => {
    const [a] = instances as [Instance];
    const request = await pendingRequest();
    const ownerToken = await bearer(request.owner);
    await keptAt(a, ownerToken);
    await (await db()).user.update({ where: { id: request.requester.id }, data: { name: "Renamed Elsewhere" } });
    expect((await read(a, ownerToken)).objects[0]!.requested_by.name).toBe("Renamed Elsewhere");
  }, 60_000);
});
