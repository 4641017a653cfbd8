// Accepting a request by its id, as the Sharing page does (docs/rules/pages.md#accepting-on-the-sharing-page):
// the same redeem as the mailed token's (docs/rules/permission-requests.md#redeeming), with its answers, and
// racing a token redeem, exactly one wins.
import { describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { db } from "@/db/client";
import { acceptPermissionRequest, redeemPermissionToken } from "@/permission-requests/use-token";
import type { Principal } from "@/resource/authenticate";
import { pendingRequest } from "@/testing/permission-request-fixtures";

type Person = { id: number; name: string; email: string };
const onPage = (user: Person, firstParty = true): Principal => ({
  userId: user.id,
  scopes: ["readonly", "readwrite"],
  clientId: null,
  via: "session",
  user: { id: user.id, name: user.name, email: user.email },
  firstParty,
});
const refusal = (promise: Promise<unknown>) => promise.then(() => null, (error: { status: number; error: string }) => ({ status: error.status, error: error.error }));

describe("accepting a request by its id", () => {
  it("lets the target accept: redeemed, the bundle permission made; a second accept is the redeem's 410", async () => {
    const r = await pendingRequest();
    const accepted = await acceptPermissionRequest({ id: r.id, principal: onPage(r.owner) });
    expect(accepted).toMatchObject({ id: r.id, status: "redeemed", redeemed_at: expect.any(String) });
    expect(await (await db()).bundlePermission.count({ where: { bundleId: r.bundle.id, userAllowedId: r.allowed.id } })).toBe(1);
    expect(await refusal(acceptPermissionRequest({ id: r.id, principal: onPage(r.owner) }))).toEqual({ status: 410, error: "this request has already been redeemed" });
    // The mailed link now says the same.
    expect(await refusal(redeemPermissionToken({ token: r.token, principal: onPage(r.owner) }))).toEqual({ status: 410, error: "this request has already been redeemed" });
  });

  it("refuses the other parties with the token's 403, anyone else with 404, and third-party clients before anything", async () => {
    const r = await pendingRequest();
    expect(await refusal(acceptPermissionRequest({ id: r.id, principal: onPage(r.requester) }))).toEqual({ status: 403, error: "only the user asked (user_target) can use this token" });
    expect(await refusal(acceptPermissionRequest({ id: r.id, principal: onPage(r.allowed) }))).toEqual({ status: 403, error: "only the user asked (user_target) can use this token" });
    const other = await pendingRequest();
    expect(await refusal(acceptPermissionRequest({ id: r.id, principal: onPage(other.owner) }))).toEqual({ status: 404, error: "no such permission request" });
    expect(await refusal(acceptPermissionRequest({ id: r.id, principal: { ...onPage(r.owner, false), via: "bearer", clientId: 1 } }))).toMatchObject({ status: 403 });
    expect((await (await db()).permissionRequest.findUniqueOrThrow({ where: { id: r.id } })).status).toBe("pending");
  });

  it("answers 410 for an expired, declined or withdrawn request, and grants nothing", async () => {
    const expired = await pendingRequest();
    advanceClock(8 * 24 * 3600 * 1000);
    try {
      expect(await refusal(acceptPermissionRequest({ id: expired.id, principal: onPage(expired.owner) }))).toEqual({ status: 410, error: "this request has expired" });
    } finally {
      resetClock();
    }
    const declined = await pendingRequest();
    await (await db()).permissionRequest.update({ where: { id: declined.id }, data: { status: "declined", deletedAt: new Date(), endedAt: new Date(), pendingKey: null } });
    expect(await refusal(acceptPermissionRequest({ id: declined.id, principal: onPage(declined.owner) }))).toEqual({ status: 410, error: "this request was declined" });
    expect(await (await db()).bundlePermission.count({ where: { bundleId: { in: [expired.bundle.id, declined.bundle.id] } } })).toBe(0);
  });

  it("racing the mailed token's redeem, exactly one succeeds", async () => {
    const r = await pendingRequest();
    const results = await Promise.allSettled([
      acceptPermissionRequest({ id: r.id, principal: onPage(r.owner) }),
      redeemPermissionToken({ token: r.token, principal: onPage(r.owner) }),
      acceptPermissionRequest({ id: r.id, principal: onPage(r.owner) }),
    ]);
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    for (const result of results) if (result.status === "rejected") expect((result.reason as { status: number }).status).toBe(410);
    expect(await (await db()).bundlePermission.count({ where: { bundleId: r.bundle.id } })).toBe(1);
  });
});
