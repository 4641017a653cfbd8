// The collection reads of src/db/collection-sql.ts against the Prisma queries they replaced (kept here as the
// reference: a count and a findMany with the representation's includes, or a findFirst, with the same
// conditions as src/bundles/access.ts, src/bundle-permissions/represent.ts and
// src/permission-requests/represent.ts), on a varied dataset on the suite's database (SQLite, and PostgreSQL
// with TEST_DATABASE_URL): every viewer, every page window, every record, the answers byte for byte.
// The rules they keep: docs/rules/permission-requests.md#bundles, #bundle-permissions, #listing-and-reading,
// #who-sees-an-e-mail-address, and docs/rules/endpoints.md#collections.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { nowMs } from "@/clock";
import { db, write } from "@/db/client";
import { bundlePermissionPage } from "@/db/collection-sql";
import { visibleBundles } from "@/bundles/access";
import { getBundle } from "@/bundles/get-bundle";
import { listBundles } from "@/bundles/list-bundles";
import { representBundle } from "@/bundles/represent";
import { getBundlePermission } from "@/bundle-permissions/get-bundle-permission";
import { listBundlePermissions } from "@/bundle-permissions/list-bundle-permissions";
import { permissionParties, PERMISSION_INCLUDE, representBundlePermission } from "@/bundle-permissions/represent";
import { collection, type PageRequest } from "@/http/collection";
import { getPermissionRequest } from "@/permission-requests/get-permission-request";
import { listPermissionRequests } from "@/permission-requests/list-permission-requests";
import { REQUEST_INCLUDE, representPermissionRequest, requestParties } from "@/permission-requests/represent";
import { call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";

const DAY_MS = 24 * 3600 * 1000;

// --- The Prisma path these reads replaced -------------------------------------------------------------

const ORDER = [{ createdAt: "desc" as const }, { id: "desc" as const }];

async function prismaBundles(viewerId: number, page: PageRequest) {
  const client = await db();
  const where = visibleBundles(viewerId);
  const [total, rows] = await Promise.all([
    client.bundle.count({ where }),
    client.bundle.findMany({ where, include: { owner: true }, orderBy: ORDER, skip: page.offset, take: page.limit }),
  ]);
  return collection(page, total, rows.map((row) => representBundle(row, viewerId)));
}

async function prismaPermissions(viewerId: number, page: PageRequest, allowedOnly: boolean) {
  const client = await db();
  const where = allowedOnly ? { userAllowedId: viewerId } : permissionParties(viewerId);
  const [total, rows] = await Promise.all([
    client.bundlePermission.count({ where }),
    client.bundlePermission.findMany({ where, include: PERMISSION_INCLUDE, orderBy: ORDER, skip: page.offset, take: page.limit }),
  ]);
  return collection(page, total, rows.map((row) => representBundlePermission(row, viewerId)));
}

async function prismaRequests(viewerId: number, page: PageRequest, at: number) {
  const client = await db();
  const where = requestParties(viewerId);
  const [total, rows] = await Promise.all([
    client.permissionRequest.count({ where }),
    client.permissionRequest.findMany({ where, include: REQUEST_INCLUDE, orderBy: ORDER, skip: page.offset, take: page.limit }),
  ]);
  return collection(page, total, rows.map((row) => representPermissionRequest(row, viewerId, at)));
}

async function prismaRecords(viewerId: number, ids: { bundle: number; permission: number; request: number }, at: number) {
  const client = await db();
  const [bundle, permission, request] = await Promise.all([
    client.bundle.findFirst({ where: { AND: [{ id: ids.bundle }, visibleBundles(viewerId)] }, include: { owner: true } }),
    client.bundlePermission.findFirst({ where: { AND: [{ id: ids.permission }, permissionParties(viewerId)] }, include: PERMISSION_INCLUDE }),
    client.permissionRequest.findFirst({ where: { AND: [{ id: ids.request }, requestParties(viewerId)] }, include: REQUEST_INCLUDE }),
  ]);
  return {
    bundle: bundle && representBundle(bundle, viewerId),
    permission: permission && representBundlePermission(permission, viewerId),
    request: request && representPermissionRequest(request, viewerId, at),
  };
}

/** The new reads, a 404 as null. */
async function orNull<T>(read: () => T | Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if ((error as { status?: number }).status === 404) return null;
    throw error;
  }
}

// --- A varied dataset -----------------------------------------------------------------------------------

type Seeded = { users: number[]; bundles: number[]; permissions: number[]; requests: number[] };

/**
 * Seven users (one with a name JSON must escape), eleven bundles, permissions between them and 40 requests in
 * every state (pending, redeemed, declined, withdrawn, expired; named by e-mail or not; with and without
 * redeem URL and ttl), several created at the same millisecond so that the id decides their order.
 */
async function seed(): Promise<Seeded> {
  const tag = randomBytes(4).toString("hex");
  const base = nowMs() - 30 * DAY_MS;
  return write(async (tx) => {
    const users: number[] = [];
    const names = ["Ann", "Bo \"quoted\" \\ back", "Cé Ünïcødé 😀", "Dee", "Ed", "Fay", "Gus"];
    for (const [i, name] of names.entries()) {
      const row = await tx.user.create({ data: { email: `coll-${tag}-${i}@example.test`, name, passwordHash: "unused", createdAt: new Date(base) } });
      users.push(row.id);
    }
    const bundles: number[] = [];
    for (let i = 0; i < 11; i++) {
      const owner = users[i % 4]!; // users 4..6 own nothing
      const createdAt = new Date(base + Math.floor(i / 3) * 1000 + (i % 2)); // ties within each three
      bundles.push((await tx.bundle.create({ data: { name: `Bundle ${i} <&>`, ownerId: owner, createdAt } })).id);
    }
    const ownerOf = async (bundleId: number) => (await tx.bundle.findUniqueOrThrow({ where: { id: bundleId } })).ownerId;
    const permissions: number[] = [];
    for (let i = 0; i < bundles.length; i++) {
      for (const allowed of [users[(i + 1) % 7]!, users[(i + 4) % 7]!]) {
        const bundleId = bundles[i]!;
        const owner = await ownerOf(bundleId);
        if (allowed === owner) continue;
        const createdAt = new Date(base + 5 * DAY_MS + (i % 4) * 1000);
        permissions.push((await tx.bundlePermission.create({ data: { bundleId, userAllowedId: allowed, userTargetId: owner, createdAt } })).id);
      }
    }
    const requests: number[] = [];
    for (let i = 0; i < 40; i++) {
      const bundleId = bundles[i % bundles.length]!;
      const target = await ownerOf(bundleId);
      const requester = users[(i * 3 + 1) % 7]!;
      const allowed = users[(i * 5 + 2) % 7]!;
      const createdAt = new Date(base + 10 * DAY_MS + Math.floor(i / 4) * 60_000);
      const state = i % 5; // 0 pending, 1 redeemed, 2 declined, 3 withdrawn, 4 expired
      const endedAt = state === 1 || state === 2 || state === 3 ? new Date(createdAt.getTime() + 1000) : null;
      const row = await tx.permissionRequest.create({
        data: {
          tokenDigest: `coll-${tag}-${i}`,
          bundleId,
          userAllowedId: allowed,
          userTargetId: target,
          requestedById: requester,
          redeemUrl: i % 3 === 0 ? null : `https://client.example.test/redeem?i=${i}&q="x"`,
          ttl: i % 4 === 0 ? null : 3600 * (i + 1),
          allowedNamedByEmail: i % 2 === 0,
          status: state === 1 ? "redeemed" : state === 2 ? "declined" : "pending",
          createdAt,
          expiresAt: new Date(state === 4 ? nowMs() - DAY_MS : nowMs() + 7 * DAY_MS),
          redeemedAt: state === 1 ? endedAt : null,
          endedAt,
          deletedAt: state === 3 ? endedAt : null,
        },
      });
      requests.push(row.id);
    }
    return { users, bundles, permissions, requests };
  });
}

describe("collection reads in one statement (src/db/collection-sql.ts)", () => {
  let data: Seeded;
  const zone = process.env.TZ;
  beforeAll(async () => {
    // Times are UTC whatever the process's time zone (PostgreSQL's JSON has them without a zone).
    process.env.TZ = "America/New_York";
    data = await seed();
  });
  afterAll(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  const windows: Array<[limit: number, offset: number]> = [[20, 0], [1, 0], [2, 1], [3, 2], [5, 5], [100, 0], [7, 30], [20, 9_007_199_254_740_991]];

  it("list every viewer's bundles, permissions and requests exactly as the Prisma queries did, for every page window", async () => {
    const viewers = [...data.users, 2_147_483_000]; // and someone who is party to nothing
    let compared = 0;
    for (const viewerId of viewers) {
      for (const [limit, offset] of windows) {
        const page = { path: "/api/x/", limit, offset };
        const at = nowMs();
        const [bundles, permissions, allowed, requests] = await Promise.all([
          listBundles({ viewerId, page }),
          listBundlePermissions({ viewerId, page }),
          listBundlePermissions({ viewerId, page, allowedOnly: true }),
          listPermissionRequests({ viewerId, page }),
        ]);
        expect(JSON.stringify(bundles)).toBe(JSON.stringify(await prismaBundles(viewerId, page)));
        expect(JSON.stringify(permissions)).toBe(JSON.stringify(await prismaPermissions(viewerId, page, false)));
        expect(JSON.stringify(allowed)).toBe(JSON.stringify(await prismaPermissions(viewerId, page, true)));
        expect(JSON.stringify(requests)).toBe(JSON.stringify(await prismaRequests(viewerId, page, at)));
        compared += bundles.objects.length + permissions.objects.length + allowed.objects.length + requests.objects.length;
      }
    }
    // The dataset is varied: pages of every kind held objects, some with e-mails shown and some without.
    expect(compared).toBeGreaterThan(300);
    const first = await listPermissionRequests({ viewerId: data.users[0]!, page: { path: "/x/", limit: 100, offset: 0 } });
    expect(new Set(first.objects.map((o) => o.status))).toEqual(new Set(["pending", "redeemed", "declined", "withdrawn", "expired"]));
  });

  it("list, unless asked for the allowed user's only, the permissions where the viewer is either party", async () => {
    let differ = 0;
    for (const viewerId of data.users) {
      const window = { limit: 100, offset: 0 };
      const either = await bundlePermissionPage(viewerId, window);
      expect(either).toEqual(await bundlePermissionPage(viewerId, window, false));
      if (JSON.stringify(either) !== JSON.stringify(await bundlePermissionPage(viewerId, window, true))) differ++;
    }
    expect(differ).toBeGreaterThan(0); // some viewer is the target of a permission, not only its allowed user
  });

  it("read every record to every viewer exactly as the Prisma queries did (404 where they found nothing)", async () => {
    const viewers = [...data.users, 2_147_483_000];
    const count = Math.max(data.bundles.length, data.permissions.length, data.requests.length);
    let found = 0;
    for (const viewerId of viewers) {
      for (let i = 0; i < count; i++) {
        const ids = { bundle: data.bundles[i % data.bundles.length]!, permission: data.permissions[i % data.permissions.length]!, request: data.requests[i % data.requests.length]! };
        const at = nowMs();
        const reads = {
          bundle: await orNull(() => getBundle({ id: String(ids.bundle), viewerId })),
          permission: await orNull(() => getBundlePermission({ id: String(ids.permission), viewerId })),
          request: await orNull(() => getPermissionRequest({ id: ids.request, viewerId })),
        };
        expect(JSON.stringify(reads)).toBe(JSON.stringify(await prismaRecords(viewerId, ids, at)));
        found += Object.values(reads).filter(Boolean).length;
      }
    }
    expect(found).toBeGreaterThan(100);
  });

  it("answer an empty page with its total and an empty list, through the API", async () => {
    const session = await passwordSession("readonly");
    for (const path of ["/api/bundle/", "/api/bundle_permission/", "/api/bundle_permission_request/"]) {
      const res = await call("GET", path, { token: session.accessToken });
      expect(res.status).toBe(200);
      expect(res.text).toBe('{"meta":{"limit":20,"offset":0,"total_count":0,"next":null,"previous":null},"objects":[]}');
    }
  });
});
