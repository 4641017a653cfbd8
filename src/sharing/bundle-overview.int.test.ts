// The page of one bundle (src/sharing/bundle-overview.ts, docs/rules/pages.md#bundle-page): shown only to who
// may read the bundle (its owner and the users allowed in); to anyone else, a requester who was not let in
// included, it is the same nothing as a bundle that does not exist. Within it, the lists follow the API's
// visibility and the e-mail rule.
import { describe, expect, it } from "vitest";
import { createBundle } from "@/bundles/create-bundle";
import { bundleOverview } from "@/sharing/bundle-overview";
import { call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";

describe("the bundle page", () => {
  it("the owner sees who may read it and every request about it; an allowed user their own access; anyone else nothing", async () => {
    const [owner, allowed, other, requester, stranger] = await Promise.all([passwordSession(), passwordSession(), passwordSession(), passwordSession(), passwordSession()]);
    const bundle = await createBundle({ ownerId: owner.user.id, name: "Photos" });
    const unrelated = await createBundle({ ownerId: owner.user.id, name: "Elsewhere" });
    for (const user of [allowed, other]) {
      expect((await call("POST", "/api/bundle_permission/", { token: owner.accessToken, body: { bundle: bundle.id, user_allowed: user.user.id } })).status).toBe(201);
    }
    const ask = (bundleId: number) =>
      call("POST", "/api/bundle_permission_request/", { token: requester.accessToken, body: { bundle: bundleId, user_allowed: requester.user.email, user_target: owner.user.email } });
    expect((await ask(bundle.id)).status).toBe(201);
    expect((await ask(unrelated.id)).status).toBe(201);

    const ownerView = await bundleOverview(owner.user.id, bundle.id);
    expect(ownerView).toMatchObject({ id: bundle.id, name: "Photos", isOwner: true });
    expect(ownerView!.permissions.map((permission) => permission.person.id)).toEqual([allowed.user.id, other.user.id]);
    // The request about this bundle only, with the requester's e-mail (the target may see it).
    expect(ownerView!.requests).toEqual([
      expect.objectContaining({ status: "pending", requestedBy: { id: requester.user.id, name: requester.user.name, email: requester.user.email } }),
    ]);
    // The owner does not learn the e-mail of people let in by id.
    expect(JSON.stringify(ownerView)).not.toContain(allowed.user.email);

    const allowedView = await bundleOverview(allowed.user.id, bundle.id);
    expect(allowedView).toMatchObject({ isOwner: false, owner: { id: owner.user.id, name: owner.user.name, email: null } });
    expect(allowedView!.permissions.map((permission) => permission.person.id)).toEqual([allowed.user.id]);
    expect(allowedView!.requests).toEqual([]);
    expect(JSON.stringify(allowedView)).not.toContain(other.user.email);

    // The requester is not let in yet: the page is not theirs, like a stranger's and like a missing bundle.
    expect(await bundleOverview(requester.user.id, bundle.id)).toBeNull();
    expect(await bundleOverview(stranger.user.id, bundle.id)).toBeNull();
    expect(await bundleOverview(owner.user.id, unrelated.id + 1000)).toBeNull();
    // As the API answers them.
    expect((await call("GET", `/api/bundle/${bundle.id}/`, { token: stranger.accessToken })).status).toBe(404);
  }, 90_000); // five accounts with tokens: password hashing is slow on a busy machine

  it("a revoked user loses the page at once; an accepted requester gains it, with their request", async () => {
    const [owner, requester] = await Promise.all([passwordSession(), passwordSession()]);
    const bundle = await createBundle({ ownerId: owner.user.id, name: "Maps" });
    const created = await call("POST", "/api/bundle_permission_request/", { token: requester.accessToken, body: { bundle: bundle.id, user_allowed: requester.user.email, user_target: owner.user.email } });
    expect(created.status).toBe(201);
    expect(await bundleOverview(requester.user.id, bundle.id)).toBeNull();
    const letIn = await call("POST", "/api/bundle_permission/", { token: owner.accessToken, body: { bundle: bundle.id, user_allowed: requester.user.id } });
    expect(letIn.status).toBe(201);
    const view = await bundleOverview(requester.user.id, bundle.id);
    expect(view!.requests.map((request) => request.id)).toEqual([created.json.id]);
    expect(JSON.stringify(view)).not.toContain(owner.user.email);
    expect((await call("DELETE", `/api/bundle_permission/${letIn.json.id}/`, { token: owner.accessToken })).status).toBe(204);
    expect(await bundleOverview(requester.user.id, bundle.id)).toBeNull();
  }, 60_000);
});
