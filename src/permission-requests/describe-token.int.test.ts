// The redeem page's view of a mailed link (src/permission-requests/describe-token.ts): every state, for the
// target only, and never a change.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { createBundle } from "@/bundles/create-bundle";
import { listMail } from "@/email/list-mail";
import { describePermissionToken } from "@/permission-requests/describe-token";
import { db } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

afterEach(() => resetClock());

async function scene(ttl?: number) {
  const [owner, requester, stranger] = await Promise.all([passwordSession(), passwordSession(), passwordSession()]);
  const bundle = await createBundle({ ownerId: owner.user.id, name: "Photos" });
  const created = await call("POST", "/api/bundle_permission_request/", {
    token: requester.accessToken,
    body: { bundle: bundle.id, user_allowed: requester.user.email, user_target: owner.user.id, ...(ttl ? { ttl } : {}) },
  });
  expect(created.status).toBe(201);
  const [mail] = await listMail({ to: owner.user.email });
  const token = /token=([A-Za-z0-9_-]{43})/.exec(mail!.text)![1]!;
  const asPage = async (method: string, path: string) =>
    call(method, path, { headers: { cookie: await sessionCookie(owner.user), origin: BASE } });
  return { owner, requester, stranger, token, id: created.json.id as number, asPage };
}

describe("describePermissionToken()", () => {
  it("shows the target a pending request with the requester's e-mail, and changes nothing", async () => {
    const s = await scene();
    for (let i = 0; i < 2; i++) {
      const view = await describePermissionToken({ token: s.token, viewerId: s.owner.user.id });
      expect(view).toMatchObject({ state: "pending", endedAt: null, request: { id: s.id, status: "pending", requested_by: { id: s.requester.user.id, email: s.requester.user.email }, bundle: { name: "Photos" } } });
    }
    expect((await (await db()).permissionRequest.findUniqueOrThrow({ where: { id: s.id } })).status).toBe("pending");
  });

  it("shows an accepted request as accepted after the redeem (a reload shows no error)", async () => {
    const s = await scene();
    expect((await s.asPage("PUT", `/api/bundle_permission_request/${s.token}/`)).status).toBe(200);
    const view = await describePermissionToken({ token: s.token, viewerId: s.owner.user.id });
    expect(view).toMatchObject({ state: "redeemed", request: { status: "redeemed", redeemed_at: expect.any(String) }, endedAt: expect.any(String) });
  });

  it("tells declined, withdrawn and expired requests apart", async () => {
    const declined = await scene();
    expect((await declined.asPage("DELETE", `/api/bundle_permission_request/${declined.id}/`)).status).toBe(204);
    expect(await describePermissionToken({ token: declined.token, viewerId: declined.owner.user.id })).toMatchObject({ state: "declined" });

    const withdrawn = await scene();
    expect((await call("DELETE", `/api/bundle_permission_request/${withdrawn.id}/`, { token: withdrawn.requester.accessToken })).status).toBe(204);
    expect(await describePermissionToken({ token: withdrawn.token, viewerId: withdrawn.owner.user.id })).toMatchObject({ state: "withdrawn" });

    const expired = await scene(60);
    advanceClock(61_000);
    expect(await describePermissionToken({ token: expired.token, viewerId: expired.owner.user.id })).toMatchObject({ state: "expired" });
  });

  it("names nothing to anyone but the target, and nothing for an unknown token", async () => {
    const s = await scene();
    for (const viewer of [s.stranger.user.id, s.requester.user.id]) expect(await describePermissionToken({ token: s.token, viewerId: viewer })).toEqual({ state: "not_for_you" });
    expect(await describePermissionToken({ token: "x".repeat(43), viewerId: s.owner.user.id })).toEqual({ state: "unknown" });
    expect(await describePermissionToken({ token: "", viewerId: s.owner.user.id })).toEqual({ state: "unknown" });
  });
});
