// Permission-request fixtures shared by the tests that line requests up at a claim: a pending request written
// as the create endpoint writes it (so that no mail or limit is involved), and bearer tokens to act on it.
import { expect } from "vitest";
import { createBundle } from "@/bundles/create-bundle";
import { nowMs } from "@/clock";
import { digest, randomSecret } from "@/secrets";
import { write } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";

type User = Awaited<ReturnType<typeof makeUser>>;

const LIST = "/api/bundle_permission_request/";
const WEEK_MS = 7 * 24 * 3600 * 1000;

/**
 * A bearer token for `user` from a password client; first-party clients may redeem
 * (docs/rules/permission-requests.md#redeeming).
 */
export async function bearer(user: User, firstParty = false): Promise<string> {
  const client = await makeClient({ ownerId: user.id, firstParty });
  const res = await call("POST", "/api/connect/oauth2/token/", {
    body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password, scope: "readonly readwrite" },
  });
  expect(res.status, res.text).toBe(200);
  return res.json.access_token as string;
}

/** A pending request (owner = target), with its token, written as the create endpoint writes it. */
export async function pendingRequest() {
  const [owner, requester, allowed] = await Promise.all([makeUser(), makeUser(), makeUser()]);
  const bundle = await createBundle({ ownerId: owner.id, name: "Shared bundle" });
  const token = randomSecret();
  const at = nowMs();
  const row = await write((tx) =>
    tx.permissionRequest.create({
      data: {
        tokenDigest: digest(token),
        bundleId: bundle.id,
        userAllowedId: allowed.id,
        userTargetId: owner.id,
        requestedById: requester.id,
        redeemUrl: `${BASE}/redeem`,
        ttl: 604800,
        status: "pending",
        pendingKey: `${bundle.id}:${allowed.id}:${owner.id}`,
        createdAt: new Date(at),
        expiresAt: new Date(at + WEEK_MS),
      },
    }),
  );
  return { owner, requester, allowed, bundle, token, id: row.id, path: `${LIST}${row.id}/`, tokenPath: `${LIST}${token}/` };
}
