// The single-use rules of permission requests under real concurrency
// (docs/rules/permission-requests.md#redeeming): of any number of concurrent redeems exactly one succeeds; a
// request is withdrawn or declined once; a delete and a redeem racing each other never both succeed; equal
// creates give one request; the hourly limit counts exactly. The requests are bearer-authenticated (a
// first-party client's token for redeem: one indexed read, no session cookie to decode) and held at a barrier
// at the entrance of the route handler until all of them have arrived (src/testing/race.ts), so every test
// shows that they overlapped: `barrier.arrived` counts the handlers that had started before any of them could
// go on. holdClaims() then lines a delete and a redeem up in each order, to show what happens to the one that
// read the record before the other committed.
import { afterEach, describe, expect, it } from "vitest";
import * as keyRoute from "../../app/api/bundle_permission_request/[key]/route";
import * as listRoute from "../../app/api/bundle_permission_request/route";
import { advanceClock, resetClock } from "@/clock";
import { env } from "@/env";
import { createBundle } from "@/bundles/create-bundle";
import { db, driver, write } from "@/db/client";
import { BASE } from "@/testing/app";
import { makeUser } from "@/testing/factories";
import { bearer, pendingRequest } from "@/testing/permission-request-fixtures";
import { Barrier, heldBody, heldParams, holdClaims, together } from "@/testing/race";

type Handler = (request: Request, context: ReturnType<typeof heldParams>) => Response | Promise<Response>;

const LIST = "/api/bundle_permission_request/";
const WEEK_MS = 7 * 24 * 3600 * 1000;


/** Calls a route handler of /api/bundle_permission_request/<key>/, with its params held at `barrier` if given. */
async function send(handler: Handler, method: string, key: string, token: string, barrier?: Barrier) {
  const request = new Request(`${BASE}${LIST}${key}/`, { method, headers: { authorization: `Bearer ${token}` } });
  const response = await handler(request, barrier ? heldParams(barrier, { key }) : { params: Promise.resolve({ key }) });
  const text = await response.text();
  return { status: response.status, json: (text ? JSON.parse(text) : null) as Record<string, unknown> | null };
}
const held = (handler: Handler, barrier: Barrier, method: string, key: string, token: string) => send(handler, method, key, token, barrier);

const permissions = async (bundleId: number) => (await db()).bundlePermission.count({ where: { bundleId } });
const stored = async (id: number) => (await db()).permissionRequest.findUniqueOrThrow({ where: { id } });

describe("concurrent redeems", () => {
  it("of ten redeems that overlap, exactly one is 200 and nine are 410; one bundle permission exists", async () => {
    const r = await pendingRequest();
    const token = await bearer(r.owner, true);
    const barrier = new Barrier(10);
    const results = await together(barrier, Array.from({ length: 10 }, () => held(keyRoute.PUT, barrier, "PUT", r.token, token)));
    // All ten handlers had started before any of them went past its first await: they overlapped.
    expect(barrier.arrived).toBe(10);
    expect(results.map((res) => res.status).sort()).toEqual([200, 410, 410, 410, 410, 410, 410, 410, 410, 410]);
    expect(results.find((res) => res.status === 200)!.json).toMatchObject({ id: r.id, status: "redeemed" });
    for (const res of results.filter((x) => x.status === 410)) expect(res.json).toEqual({ error: "this request has already been redeemed" });
    expect(await permissions(r.bundle.id)).toBe(1);
    expect(await stored(r.id)).toMatchObject({ status: "redeemed", pendingKey: null });
  });
});

describe("concurrent deletes", () => {
  it("of ten withdrawals by the requester that overlap, exactly one is 204 and nine are 404", async () => {
    const r = await pendingRequest();
    const token = await bearer(r.requester);
    const barrier = new Barrier(10);
    const results = await together(barrier, Array.from({ length: 10 }, () => held(keyRoute.DELETE, barrier, "DELETE", String(r.id), token)));
    expect(barrier.arrived).toBe(10);
    expect(results.map((res) => res.status).sort()).toEqual([204, 404, 404, 404, 404, 404, 404, 404, 404, 404]);
    for (const res of results.filter((x) => x.status === 404)) expect(res.json).toEqual({ error: "no such permission request" });
    expect(await stored(r.id)).toMatchObject({ status: "pending", deletedAt: expect.any(Date), pendingKey: null });
  });

  it("a withdrawal and a decline that overlap: exactly one is 204, and the record says which", async () => {
    const r = await pendingRequest();
    const [requesterToken, ownerToken] = await Promise.all([bearer(r.requester), bearer(r.owner)]);
    const barrier = new Barrier(2);
    const [withdrawn, declined] = await together(barrier, [
      held(keyRoute.DELETE, barrier, "DELETE", String(r.id), requesterToken),
      held(keyRoute.DELETE, barrier, "DELETE", String(r.id), ownerToken),
    ]);
    expect(barrier.arrived).toBe(2);
    expect([withdrawn!.status, declined!.status].sort()).toEqual([204, 404]);
    const row = await stored(r.id);
    expect(row.status).toBe(declined!.status === 204 ? "declined" : "pending");
    expect(row.deletedAt).toEqual(expect.any(Date));
  });
});

describe("a delete racing a redeem", () => {
  it("never lets both succeed: the winner's outcome is the stored one, the loser gets 409 or 410", async () => {
    const r = await pendingRequest();
    const [requesterToken, ownerToken] = await Promise.all([bearer(r.requester), bearer(r.owner, true)]);
    const barrier = new Barrier(2);
    const [deleted, redeemed] = await together(barrier, [
      held(keyRoute.DELETE, barrier, "DELETE", String(r.id), requesterToken),
      held(keyRoute.PUT, barrier, "PUT", r.token, ownerToken),
    ]);
    expect(barrier.arrived).toBe(2);
    const row = await stored(r.id);
    if (redeemed!.status === 200) {
      expect(deleted).toEqual({ status: 409, json: { error: "this request was redeemed: revoke the bundle permission instead" } });
      expect(row).toMatchObject({ status: "redeemed", deletedAt: null });
      expect(await permissions(r.bundle.id)).toBe(1);
    } else {
      expect(deleted!.status).toBe(204);
      expect(redeemed).toEqual({ status: 410, json: { error: "this request was deleted" } });
      expect(row).toMatchObject({ status: "pending", deletedAt: expect.any(Date) });
      expect(await permissions(r.bundle.id)).toBe(0);
    }
  });
});

describe("a request that read the record before another one committed, and claims after it", () => {
  // holdClaims() lines the two up: the first fired reads and waits at its claim, the second reads the record
  // while it is still pending and waits behind the first. Released, the first commits, and the second's
  // claim must find nothing to change: only a conditional claim keeps it from succeeding as well.
  it("a delete behind a redeem answers 409, and the request stays redeemed", async () => {
    const r = await pendingRequest();
    const [requesterToken, ownerToken] = await Promise.all([bearer(r.requester), bearer(r.owner, true)]);
    const hold = await holdClaims("PermissionRequest", r.id);
    const redeem = send(keyRoute.PUT, "PUT", r.token, ownerToken);
    await hold.waitForClaims(1);
    const remove = send(keyRoute.DELETE, "DELETE", String(r.id), requesterToken);
    await hold.waitForClaims(2);
    await hold.release();
    const [redeemed, deleted] = await Promise.all([redeem, remove]);
    expect({ status: redeemed.status, id: redeemed.json?.id, state: redeemed.json?.status }).toEqual({ status: 200, id: r.id, state: "redeemed" });
    expect(deleted).toEqual({ status: 409, json: { error: "this request was redeemed: revoke the bundle permission instead" } });
    expect(await stored(r.id)).toMatchObject({ status: "redeemed", deletedAt: null });
    expect(await permissions(r.bundle.id)).toBe(1);
  });

  it("a redeem behind a delete answers 410, and no bundle permission is made", async () => {
    const r = await pendingRequest();
    const [requesterToken, ownerToken] = await Promise.all([bearer(r.requester), bearer(r.owner, true)]);
    const hold = await holdClaims("PermissionRequest", r.id);
    const remove = send(keyRoute.DELETE, "DELETE", String(r.id), requesterToken);
    await hold.waitForClaims(1);
    const redeem = send(keyRoute.PUT, "PUT", r.token, ownerToken);
    await hold.waitForClaims(2);
    await hold.release();
    const [deleted, redeemed] = await Promise.all([remove, redeem]);
    expect(deleted.status).toBe(204);
    expect(redeemed).toEqual({ status: 410, json: { error: "this request was deleted" } });
    expect(await stored(r.id)).toMatchObject({ status: "pending", deletedAt: expect.any(Date), redeemedAt: null });
    expect(await permissions(r.bundle.id)).toBe(0);
  });
});

describe("concurrent creates", () => {
  /** POSTs a create with its body held at `barrier`. */
  async function heldCreate(barrier: Barrier, token: string, body: Record<string, unknown>) {
    const request = new Request(BASE + LIST, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: heldBody(barrier, JSON.stringify(body)),
      // @ts-expect-error Node's fetch needs duplex for a streamed request body.
      duplex: "half",
    });
    const response = await listRoute.POST(request, { params: Promise.resolve({}) });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  /**
   * A bundle owner with a confirmed address (docs/rules/accounts.md#sign-up-and-confirmation), and a requester
   * with a bearer token.
   */
  async function owners(bundles: number) {
    const [owner, requester] = await Promise.all([makeUser(), makeUser()]);
    await write((tx) => tx.user.update({ where: { id: owner.id }, data: { emailVerifiedAt: new Date() } }));
    const made = await Promise.all(Array.from({ length: bundles }, (_, i) => createBundle({ ownerId: owner.id, name: `Raced ${i}` })));
    return { owner, requester, token: await bearer(requester), bundles: made };
  }

  it("six equal creates that overlap: one 201, five 409, one request and one mail", async () => {
    const { owner, requester, token, bundles } = await owners(1);
    const barrier = new Barrier(6);
    const body = { bundle: bundles[0]!.id, user_allowed: requester.id, user_target: owner.id };
    const results = await together(barrier, Array.from({ length: 6 }, () => heldCreate(barrier, token, body)));
    expect(barrier.arrived).toBe(6);
    expect(results.map((res) => res.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const res of results.filter((r) => r.status === 409)) expect(res.json).toEqual({ error: "a pending request for this bundle, user_allowed and user_target already exists" });
    const client = await db();
    expect(await client.permissionRequest.count({ where: { bundleId: bundles[0]!.id } })).toBe(1);
    expect(await client.mailMessage.count({ where: { to: owner.email } })).toBe(1);
  });

  it("twenty-five creates by one requester that overlap: twenty 201 and five 429, with twenty mails", async () => {
    const { owner, requester, token, bundles } = await owners(25);
    const barrier = new Barrier(25);
    const results = await together(
      barrier,
      bundles.map((bundle) => heldCreate(barrier, token, { bundle: bundle.id, user_allowed: requester.id, user_target: owner.id })),
    );
    expect(barrier.arrived).toBe(25);
    const statuses = results.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    for (const res of results.filter((r) => r.status === 429)) expect(res.json).toEqual({ error: "rate_limited" });
    expect(await (await db()).mailMessage.count({ where: { to: owner.email } })).toBe(20);
  });
});

// What changes while a request waits at its claim, after it read the record. These need the clock or a row to
// change while a claim waits without having read its time yet: on SQLite a claim waits for the transaction
// lock before its transaction starts (src/testing/race.ts), on PostgreSQL it has read its time and waits
// inside its transaction for the row lock, so the expiry case cannot be lined up there.
describe.runIf(env().database.kind === "sqlite")("what happens to the record while a claim waits (SQLite)", () => {
  afterEach(() => resetClock());

  /** Deletes a bundle at once (its requests go with it), on the connection, while the test holds the lock. */
  const deleteBundleNow = async (bundleId: number) => {
    const d = await driver();
    if (d.kind !== "sqlite") throw new Error("SQLite only");
    d.connection.prepare(`DELETE FROM "Bundle" WHERE "id" = ?`).run(bundleId);
  };

  it("a token that expires while its redeem waits at the claim is not redeemed: 410, and no bundle permission", async () => {
    const r = await pendingRequest();
    const ownerToken = await bearer(r.owner, true);
    const hold = await holdClaims("PermissionRequest", r.id);
    const redeem = send(keyRoute.PUT, "PUT", r.token, ownerToken);
    await hold.waitForClaims(1); // it read the request while it was pending
    advanceClock(WEEK_MS + 1_000);
    await hold.release();
    expect(await redeem).toEqual({ status: 410, json: { error: "this request has expired" } });
    expect(await stored(r.id)).toMatchObject({ status: "pending", redeemedAt: null });
    expect(await permissions(r.bundle.id)).toBe(0);
  });

  it("a redeem whose request is deleted with its bundle while it waits at the claim answers 404", async () => {
    const r = await pendingRequest();
    const ownerToken = await bearer(r.owner, true);
    const hold = await holdClaims("PermissionRequest", r.id);
    const redeem = send(keyRoute.PUT, "PUT", r.token, ownerToken);
    await hold.waitForClaims(1);
    await deleteBundleNow(r.bundle.id);
    await hold.release();
    expect(await redeem).toEqual({ status: 404, json: { error: "no such permission request token" } });
    expect(await (await db()).permissionRequest.findUnique({ where: { id: r.id } })).toBeNull();
  });

  it("a delete whose request is deleted with its bundle while it waits at the claim answers 404", async () => {
    const r = await pendingRequest();
    const requesterToken = await bearer(r.requester);
    const hold = await holdClaims("PermissionRequest", r.id);
    const remove = send(keyRoute.DELETE, "DELETE", String(r.id), requesterToken);
    await hold.waitForClaims(1);
    await deleteBundleNow(r.bundle.id);
    await hold.release();
    expect(await remove).toEqual({ status: 404, json: { error: "no such permission request" } });
  });
});
