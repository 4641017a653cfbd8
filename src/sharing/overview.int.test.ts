// What /settings/sharing shows (src/sharing/overview.ts) under the e-mail visibility rule
// (docs/rules/permission-requests.md#who-sees-an-e-mail-address): an owner who lets any user id into their own
// bundle must not learn that user's e-mail.
import { describe, expect, it } from "vitest";
import { createBundle } from "@/bundles/create-bundle";
import { sharingOverview } from "@/sharing/overview";
import { call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";

describe("the sharing overview", () => {
  it("shows an owner only the names and ids of the people let into their bundle, never their e-mails (the harvesting attack)", async () => {
    const [harvester, victim] = await Promise.all([passwordSession(), passwordSession()]);
    const bundle = await createBundle({ ownerId: harvester.user.id, name: "Trap" });
    // Any user id may be let in, without their consent: that part of the attack still works...
    const letIn = await call("POST", "/api/bundle_permission/", { token: harvester.accessToken, body: { bundle: bundle.id, user_allowed: victim.user.id } });
    expect(letIn.status).toBe(201);
    expect(letIn.json.user_allowed).toEqual({ id: victim.user.id, resource_uri: `/api/user/${victim.user.id}/`, name: victim.user.name });

    // ...but the page shows nothing more than the API.
    const overview = await sharingOverview(harvester.user.id);
    expect(JSON.stringify(overview)).not.toContain(victim.user.email);
    expect(overview.bundles).toEqual([
      expect.objectContaining({ id: bundle.id, name: "Trap", permissions: [expect.objectContaining({ person: { id: victim.user.id, name: victim.user.name, email: null } })] }),
    ]);
  });

  it("shows the target of a request the requester's e-mail, and the allowed user's only when named by e-mail; the requester sees names", async () => {
    const [owner, requester, allowed, other] = await Promise.all([passwordSession(), passwordSession(), passwordSession(), passwordSession()]);
    const bundle = await createBundle({ ownerId: owner.user.id, name: "Photos" });
    const ask = (userAllowed: unknown) =>
      call("POST", "/api/bundle_permission_request/", { token: requester.accessToken, body: { bundle: bundle.id, user_allowed: userAllowed, user_target: owner.user.id } });
    expect((await ask(allowed.user.email)).status).toBe(201);
    expect((await ask(other.user.id)).status).toBe(201);

    const targetView = await sharingOverview(owner.user.id);
    expect(targetView.received.map((r) => ({ requester: r.requestedBy, allowed: r.userAllowed }))).toEqual([
      { requester: { id: requester.user.id, name: requester.user.name, email: requester.user.email }, allowed: { id: other.user.id, name: other.user.name, email: null } },
      { requester: { id: requester.user.id, name: requester.user.name, email: requester.user.email }, allowed: { id: allowed.user.id, name: allowed.user.name, email: allowed.user.email } },
    ]);

    const requesterView = await sharingOverview(requester.user.id);
    expect(JSON.stringify(requesterView)).not.toContain(owner.user.email);
    expect(JSON.stringify(requesterView)).not.toContain(other.user.email);
    expect(requesterView.sent.map((r) => r.userTarget)).toEqual([
      { id: owner.user.id, name: owner.user.name, email: null },
      { id: owner.user.id, name: owner.user.name, email: null },
    ]);
  });
});

describe("the sharing overview: both sides of an access", () => {
  it("shows the allowed user the bundles others let them into, the owner by name and id only", async () => {
    const [owner, allowed] = await Promise.all([passwordSession(), passwordSession()]);
    const bundle = await createBundle({ ownerId: owner.user.id, name: "Maps" });
    expect((await call("POST", "/api/bundle_permission/", { token: owner.accessToken, body: { bundle: bundle.id, user_allowed: allowed.user.email } })).status).toBe(201);
    const view = await sharingOverview(allowed.user.id);
    expect(view.allowedInto).toEqual([
      { id: expect.any(Number), createdAt: expect.any(Date), bundle: { id: bundle.id, name: "Maps" }, owner: { id: owner.user.id, name: owner.user.name, email: null } },
    ]);
    expect(view.bundles).toEqual([]);
    expect((await sharingOverview(owner.user.id)).allowedInto).toEqual([]);
  });

  it("shows the requester the requests they sent with what became of them, declined and withdrawn ones included", async () => {
    const [owner, requester] = await Promise.all([passwordSession(), passwordSession()]);
    const [first, second, third] = await Promise.all(["One", "Two", "Three"].map((name) => createBundle({ ownerId: owner.user.id, name })));
    const ask = (bundleId: number) =>
      call("POST", "/api/bundle_permission_request/", { token: requester.accessToken, body: { bundle: bundleId, user_allowed: requester.user.id, user_target: owner.user.id } });
    const pending = await ask(first!.id);
    const declined = await ask(second!.id);
    const withdrawn = await ask(third!.id);
    expect((await call("DELETE", `/api/bundle_permission_request/${declined.json.id}/`, { token: owner.accessToken })).status).toBe(204);
    expect((await call("DELETE", `/api/bundle_permission_request/${withdrawn.json.id}/`, { token: requester.accessToken })).status).toBe(204);
    const view = await sharingOverview(requester.user.id);
    expect(view.sent.map((request) => ({ id: request.id, bundle: request.bundle.name, status: request.status }))).toEqual([
      { id: withdrawn.json.id, bundle: "Three", status: "withdrawn" },
      { id: declined.json.id, bundle: "Two", status: "declined" },
      { id: pending.json.id, bundle: "One", status: "pending" },
    ]);
    expect((await sharingOverview(owner.user.id)).received.map((request) => request.id)).toEqual([pending.json.id]);
  });
});
