// What `tokens:prune` (docs/rules/operations.md#admin-cli) does to answers: a withdrawn or declined permission
// request answers 410 for its token until it is pruned 30 days after it ended, then 404
// (docs/rules/permission-requests.md#deleting-and-declining); an expired access token can still be deleted
// (204) until it is pruned a day after it expired, then 404 (docs/rules/tokens.md#deleting-a-token). The time
// that has passed is written into the rows (the database is shared with test files running at once, so the
// clock is not moved), and the prune is the real command, run as an operator runs it.
import { describe, expect, it } from "vitest";
import { nowMs } from "@/clock";
import { createBundle } from "@/bundles/create-bundle";
import { digest, randomSecret } from "@/secrets";
import { write } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { runCli } from "@/testing/cli";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";

const DAY = 24 * 3600 * 1000;
const ago = (ms: number) => new Date(nowMs() - ms);

async function prune() {
  const run = await runCli("tokens:prune", "--json");
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Record<string, number>;
}

describe("answers after tokens:prune", () => {
  it("a declined request's token: 410 while it is kept, 404 once pruned 30 days after it ended", async () => {
    const [owner, requester] = await Promise.all([makeUser(), makeUser()]);
    const ownerClient = await makeClient({ ownerId: owner.id, firstParty: true });
    const grant = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "password", client_id: ownerClient.client_id, client_secret: ownerClient.client_secret, username: owner.email, password: owner.password, scope: "readonly readwrite" },
    });
    const token = grant.json.access_token as string;
    const bundle = await createBundle({ ownerId: owner.id, name: "Pruned" });
    const [kept, pruned] = await Promise.all(
      [0, 1].map(async () => {
        const secret = randomSecret();
        const at = nowMs();
        const row = await write((tx) =>
          tx.permissionRequest.create({
            data: {
              tokenDigest: digest(secret), bundleId: bundle.id, userAllowedId: requester.id, userTargetId: owner.id, requestedById: requester.id,
              redeemUrl: `${BASE}/redeem`, ttl: 604800, status: "pending", pendingKey: null, createdAt: new Date(at), expiresAt: new Date(at + 7 * DAY),
            },
          }),
        );
        return { id: row.id, path: `/api/bundle_permission_request/${secret}/` };
      }),
    );
    for (const request of [kept!, pruned!]) {
      expect((await call("DELETE", `/api/bundle_permission_request/${request.id}/`, { token })).status).toBe(204);
      const check = await call("GET", request.path, { token });
      expect({ status: check.status, body: check.json }).toEqual({ status: 410, body: { error: "this request was declined" } });
    }
    // One ended 31 days ago, the other 29.
    await write((tx) => tx.permissionRequest.update({ where: { id: pruned!.id }, data: { endedAt: ago(31 * DAY) } }));
    await write((tx) => tx.permissionRequest.update({ where: { id: kept!.id }, data: { endedAt: ago(29 * DAY) } }));

    expect((await prune()).permission_requests).toBeGreaterThanOrEqual(1);
    for (const method of ["GET", "PUT"]) {
      const gone = await call(method, pruned!.path, { token });
      expect({ method, status: gone.status, body: gone.json }).toEqual({ method, status: 404, body: { error: "no such permission request token" } });
    }
    const still = await call("GET", kept!.path, { token });
    expect({ status: still.status, body: still.json }).toEqual({ status: 410, body: { error: "this request was declined" } });
  }, 120_000);

  it("an expired access token: DELETE is 204 while it is kept, 404 once pruned a day after it expired", async () => {
    const [pruned, kept] = await Promise.all([passwordSession(), passwordSession()]);
    await write((tx) => tx.accessToken.update({ where: { digest: digest(pruned.accessToken) }, data: { expiresAt: ago(DAY + 60_000) } }));
    await write((tx) => tx.accessToken.update({ where: { digest: digest(kept.accessToken) }, data: { expiresAt: ago(DAY - 60_000) } }));
    expect((await prune()).access_tokens).toBeGreaterThanOrEqual(1);
    const gone = await call("DELETE", `/api/accesstoken/${pruned.accessToken}`);
    expect({ status: gone.status, body: gone.json }).toEqual({ status: 404, body: { error: "no such token" } });
    const deleted = await call("DELETE", `/api/oauth2token/${kept.accessToken}/`);
    expect(deleted.status).toBe(204);
  }, 120_000);
});
