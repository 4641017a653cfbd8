// Nothing secret is stored in the clear (docs/rules/accounts.md#secrets-at-rest): read straight from the
// database, a device authorization holds its device code only as a SHA-256 digest (RFC 8628 3.2: the device
// code is the device's bearer credential at the token endpoint), and an account token (e-mail confirmation,
// password reset) only its digest. The user code is stored as typed: it is the lookup key a person types,
// useless without a signed-in approval, short-lived, and shown on the device for anyone to read.
import { describe, expect, it } from "vitest";
import { issueAccountToken } from "@/accounts/account-tokens";
import { digest, randomSecret } from "@/secrets";
import { db, write } from "@/db/client";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";

describe("secrets at rest", () => {
  it("a device authorization keeps the device code only as its digest", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "device_code", isPublic: true, redirectUris: [] });
    const started = await call("POST", "/api/connect/oauth2/device/", { body: { client_id: client.client_id, scope: "readonly" } });
    expect(started.status).toBe(200);
    const deviceCode = String(started.json.device_code);
    const row = await (await db()).deviceAuthorization.findUnique({ where: { deviceCodeDigest: digest(deviceCode) } });
    expect(row).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(deviceCode);
  });

  it("an account token keeps only its digest", async () => {
    const user = await makeUser();
    const token = randomSecret();
    const { id } = await write((tx) => issueAccountToken(tx, { token, userId: user.id, purpose: "reset_password", email: user.email, ttlMs: 60_000 }));
    const row = await (await db()).accountToken.findUnique({ where: { id } });
    expect(row!.digest).toBe(digest(token));
    expect(JSON.stringify(row)).not.toContain(token);
  });
});
