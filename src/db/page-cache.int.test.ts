// The collection-page cache (src/db/page-cache.ts, docs/design.md#the-page-cache): a page of bundles, bundle
// permissions or permission requests is answered again from the process's cache while nothing it shows can
// have changed, and every change is in the very next answer, on the suite's database (SQLite, and PostgreSQL
// with TEST_DATABASE_URL). The instances file beside it proves the same across processes.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { createBundle } from "@/bundles/create-bundle";
import { connectedDriver, db, write } from "@/db/client";
import { keptPages, MAX_PAGES } from "@/db/page-cache";
import { pageCacheHits } from "@/observability/metrics";
import { call } from "@/testing/app";
import { makeUser } from "@/testing/factories";
import { bearer, pendingRequest } from "@/testing/permission-request-fixtures";

type Page = { meta: { total_count: number }; objects: Array<Record<string, unknown>> };

afterEach(() => resetClock());

async function list(path: string, token: string): Promise<Page> {
  const response = await call("GET", path, { token });
  expect(response.status, response.text).toBe(200);
  return response.json as Page;
}

/**
 * Reads the page until it is answered from the cache (at once on SQLite; on PostgreSQL once the instance's
 * lease is fresh), and that answer must equal the one before it.
 */
async function kept(path: string, token: string): Promise<Page> {
  const started = Date.now();
  let before = await list(path, token);
  for (;;) {
    const hits = pageCacheHits.count;
    const page = await list(path, token);
    if (pageCacheHits.count === hits + 1) {
      expect(page).toEqual(before);
      return page;
    }
    if (Date.now() - started > 10_000) throw new Error("the page was never answered from the cache");
    before = page;
  }
}

/** The next read, which must not come from the cache. */
async function next(path: string, token: string): Promise<Page> {
  const hits = pageCacheHits.count;
  const page = await list(path, token);
  expect(pageCacheHits.count, "a page was answered from the cache after a change").toBe(hits);
  return page;
}

const REQUESTS = "/api/bundle_permission_request/";
const BUNDLES = "/api/bundle/";
const PERMISSIONS = "/api/bundle_permission/";

describe("collection pages kept while nothing changes", () => {
  it("answers an unchanged page from the cache, each window and viewer on its own", async () => {
    const request = await pendingRequest();
    const [ownerToken, requesterToken] = await Promise.all([bearer(request.owner), bearer(request.requester)]);
    const owners = await kept(REQUESTS, ownerToken);
    const requesters = await kept(REQUESTS, requesterToken);
    expect(owners.objects[0]!.id).toBe(request.id);
    // The same request, seen by each: the target sees the requester's e-mail, the requester the target's name only.
    expect(owners.objects[0]!.requested_by).toHaveProperty("email", request.requester.email);
    expect(requesters.objects[0]!.user_target).not.toHaveProperty("email");
    const window = await kept(`${REQUESTS}?limit=1&offset=1`, ownerToken);
    expect(window.objects).toEqual([]);
  });

  it("shows every change in the very next answer: a request made, withdrawn, a bundle made, a permission, a rename", async () => {
    const request = await pendingRequest();
    const [ownerToken, requesterToken] = await Promise.all([bearer(request.owner), bearer(request.requester)]);
    const start = await kept(REQUESTS, ownerToken);
    expect(start.meta.total_count).toBe(1);

    // A second request for the same owner.
    const allowed = await makeUser();
    const at = nowMs();
    await write((tx) =>
      tx.permissionRequest.create({
        data: {
          tokenDigest: `page-cache-${request.id}-${allowed.id}`,
          bundleId: request.bundle.id,
          userAllowedId: allowed.id,
          userTargetId: request.owner.id,
          requestedById: request.requester.id,
          status: "pending",
          createdAt: new Date(at + 1),
          expiresAt: new Date(at + 3_600_000),
        },
      }),
    );
    expect((await next(REQUESTS, ownerToken)).meta.total_count).toBe(2);

    // Withdrawn by its requester (through the API).
    await kept(REQUESTS, ownerToken);
    expect((await call("DELETE", request.path, { token: requesterToken })).status).toBe(204);
    const withdrawn = await next(REQUESTS, ownerToken);
    expect(withdrawn.objects.find((o) => o.id === request.id)?.status).toBe("withdrawn");

    // A bundle made.
    expect((await kept(BUNDLES, ownerToken)).meta.total_count).toBe(1);
    await createBundle({ ownerId: request.owner.id, name: "Made later" });
    expect((await next(BUNDLES, ownerToken)).objects[0]!.name).toBe("Made later");

    // A permission given.
    expect((await kept(PERMISSIONS, ownerToken)).meta.total_count).toBe(0);
    await write((tx) => tx.bundlePermission.create({ data: { bundleId: request.bundle.id, userAllowedId: request.allowed.id, userTargetId: request.owner.id } }));
    expect((await next(PERMISSIONS, ownerToken)).meta.total_count).toBe(1);

    // The requester renamed: their name is on the owner's page.
    await kept(REQUESTS, ownerToken);
    await (await db()).user.update({ where: { id: request.requester.id }, data: { name: "Renamed Requester" } });
    const renamed = await next(REQUESTS, ownerToken);
    expect(renamed.objects.map((o) => (o.requested_by as { name: string }).name)).toEqual(["Renamed Requester", "Renamed Requester"]);
  });

  it("turns a pending request expired at its expiry, with nothing committed", async () => {
    const request = await pendingRequest();
    await write((tx) => tx.permissionRequest.update({ where: { id: request.id }, data: { expiresAt: new Date(nowMs() + 30_000) } }));
    const ownerToken = await bearer(request.owner);
    expect((await kept(REQUESTS, ownerToken)).objects[0]!.status).toBe("pending");
    advanceClock(31_000); // past the request's expiry; the bearer token lives on
    expect((await next(REQUESTS, ownerToken)).objects[0]!.status).toBe("expired");
  });

  it(`keeps at most ${MAX_PAGES} pages, the oldest dropped first`, async () => {
    const request = await pendingRequest();
    const ownerToken = await bearer(request.owner);
    for (let offset = 0; offset <= MAX_PAGES; offset++) await list(`${BUNDLES}?offset=${offset}`, ownerToken);
    expect(keptPages().pages).toBeLessThanOrEqual(MAX_PAGES);
    // On SQLite every read was kept, so the first window was dropped and the last one is kept. (On PostgreSQL a
    // read made while the lease was not fresh is not kept: which ones were depends on the heartbeats.)
    if (connectedDriver()?.kind !== "sqlite") return;
    expect(keptPages().pages).toBe(MAX_PAGES);
    await next(`${BUNDLES}?offset=0`, ownerToken);
    const hits = pageCacheHits.count;
    await list(`${BUNDLES}?offset=${MAX_PAGES}`, ownerToken);
    expect(pageCacheHits.count).toBe(hits + 1);
  }, 60_000);
});
