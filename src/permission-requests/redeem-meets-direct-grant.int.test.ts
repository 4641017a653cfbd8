// A redeem that meets a direct grant of the same access (src/permission-requests/use-token.ts,
// docs/rules/permission-requests.md#redeeming): the bundle's owner grants the user access directly (POST
// /api/bundle_permission/) while the redeem of a pending request for that very access is under way. The redeem
// still succeeds: the request is redeemed, the access exists once, and the redeem is recorded once.
//
// The databases differ in how the two meet, and the test lines them up so that each meets its hard case. The
// direct grant is written in a transaction that the test holds open (standing in for the grant's own
// one-statement transaction at the unlucky instant) until the redeem waits on it:
//   - PostgreSQL: the redeem claims the request, finds no permission (the grant is not committed), inserts one
//     and waits on the unique index; the grant commits, the insert fails (P2002), the claim rolls back with
//     it, and the redeem's second try finds the permission.
//   - SQLite: the redeem's transaction waits for the lock the grant holds, and then finds the permission.
import { describe, expect, it } from "vitest";
import { nowMs } from "@/clock";
import { env } from "@/env";
import { db, driver, write } from "@/db/client";
import { call } from "@/testing/app";
import { bearer, pendingRequest } from "@/testing/permission-request-fixtures";

const LIST = "/api/bundle_permission_request/";


/**
 * Writes the owner's direct grant in a transaction held open until commit(); waitForRedeem() resolves once
 * the redeem waits on it (PostgreSQL: a session blocked by ours; SQLite: a transaction queued on the lock).
 */
async function heldDirectGrant(data: { bundleId: number; userAllowedId: number; userTargetId: number }) {
  await db();
  let commit!: () => void;
  const gate = new Promise<void>((resolve) => (commit = resolve));
  let holding!: (pid: number | null) => void;
  const held = new Promise<number | null>((resolve) => (holding = resolve));
  const postgres = env().database.kind === "postgresql";
  const transaction = write(async (tx) => {
    await tx.bundlePermission.create({ data: { ...data, createdAt: new Date(nowMs()) } });
    holding(postgres ? (await tx.$queryRawUnsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid"))[0]!.pid : null);
    await gate;
  });
  const pid = await held;
  const waiting = async () => {
    if (pid === null) {
      const d = await driver();
      return d.kind === "sqlite" ? d.queued() : 0;
    }
    // Not through Prisma's pool, whose connections may all be taken: fast-sql's pool reads pg_stat_activity.
    const d = await driver();
    if (d.kind !== "postgresql") return 0;
    const rows = await d.pool.query<{ waiting: number }>("SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", [pid]);
    return rows.rows[0]!.waiting;
  };
  return {
    async waitForRedeem(): Promise<void> {
      for (let i = 0; i < 4000; i++) {
        if ((await waiting()) >= 1) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      throw new Error("the redeem never waited on the direct grant");
    },
    async commit(): Promise<void> {
      commit();
      await transaction;
    },
  };
}

describe("a redeem meeting a direct grant of the same access", () => {
  it("succeeds: the request is redeemed, the bundle permission exists once, and one redeem is recorded", async () => {
    const r = await pendingRequest();
    const ownerBearer = await bearer(r.owner, true);
    const grant = await heldDirectGrant({ bundleId: r.bundle.id, userAllowedId: r.allowed.id, userTargetId: r.owner.id });
    const redeem = call("PUT", `${LIST}${r.token}/`, { token: ownerBearer });
    await grant.waitForRedeem();
    await grant.commit();
    const redeemed = await redeem;
    expect({ status: redeemed.status, id: redeemed.json.id, state: redeemed.json.status }).toEqual({ status: 200, id: r.id, state: "redeemed" });
    const client = await db();
    expect(await client.bundlePermission.count({ where: { bundleId: r.bundle.id, userAllowedId: r.allowed.id } })).toBe(1);
    expect(await client.permissionRequest.findUniqueOrThrow({ where: { id: r.id } })).toMatchObject({ status: "redeemed", pendingKey: null });
    // PostgreSQL's first try, rolled back with its failed insert, left no event behind.
    const events = await client.auditEvent.findMany({ where: { type: "permission_request.redeemed", userId: r.owner.id } });
    expect(events.map((event) => JSON.parse(event.detail!))).toEqual([{ request: r.id, bundle: r.bundle.id, user_allowed: r.allowed.id }]);
  });
});
