// docs/rules/permission-requests.md#mail-and-the-outbox: the e-mail is written to an outbox in the same
// database transaction as the request, so that a request never exists without its mail and no mail goes out
// for a request that was not made. The database itself refuses one of the two writes (src/testing/faults.ts)
// and the test checks that the other one was not kept either, and that nothing left behind blocks the next
// try.
import { describe, expect, it } from "vitest";
import { createBundle } from "@/bundles/create-bundle";
import { listMail } from "@/email/list-mail";
import { db, write } from "@/db/client";
import { call } from "@/testing/app";
import { makeUser, passwordSession } from "@/testing/factories";
import { refuseInserts } from "@/testing/faults";

const LIST = "/api/bundle_permission_request/";

/**
 * A bundle owner with a confirmed address (docs/rules/accounts.md#sign-up-and-confirmation), and a requester
 * asking to be let in.
 */
async function scene() {
  const owner = await makeUser();
  await write((tx) => tx.user.update({ where: { id: owner.id }, data: { emailVerifiedAt: new Date() } }));
  const requester = await passwordSession();
  const bundle = await createBundle({ ownerId: owner.id, name: "Outboxed" });
  const ask = () =>
    call("POST", LIST, { token: requester.accessToken, body: { bundle: bundle.id, user_allowed: requester.user.id, user_target: owner.id } });
  const requests = () => db().then((client) => client.permissionRequest.count({ where: { bundleId: bundle.id } }));
  return { owner, requester, bundle, ask, requests };
}

describe("the request and its mail are written in one transaction", () => {
  it("when the mail cannot be written, the request is not created either, and the next try succeeds", async () => {
    const s = await scene();
    const undo = await refuseInserts("MailMessage", "to", s.owner.email);
    let refused;
    try {
      refused = await s.ask();
    } finally {
      await undo();
    }
    expect({ status: refused.status, body: refused.json }).toEqual({ status: 500, body: { error: "server_error" } });
    expect(await s.requests()).toBe(0);
    expect(await listMail({ to: s.owner.email })).toEqual([]);

    // Nothing was kept: no pending request holds the place of the next one.
    const retried = await s.ask();
    expect(retried.status, retried.text).toBe(201);
    expect(await s.requests()).toBe(1);
    expect((await listMail({ to: s.owner.email })).map((mail) => mail.status)).toEqual(["pending"]);
  });

  it("when the request cannot be written, no mail is left in the outbox", async () => {
    const s = await scene();
    const undo = await refuseInserts("PermissionRequest", "bundleId", s.bundle.id);
    let refused;
    try {
      refused = await s.ask();
    } finally {
      await undo();
    }
    expect({ status: refused.status, body: refused.json }).toEqual({ status: 500, body: { error: "server_error" } });
    expect(await s.requests()).toBe(0);
    expect(await listMail({ to: s.owner.email })).toEqual([]);
  });
});
