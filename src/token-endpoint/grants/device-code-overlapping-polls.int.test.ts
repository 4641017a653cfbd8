// RFC 8628 3.4/3.5 and docs/rules/tokens.md#device-flow under overlap: two polls of one device code that both
// read it before either writes. holdClaims() (src/testing/race.ts) lines them up: each reads the device
// authorization, then waits at its conditional write. For an approved code exactly one gets the tokens
// (recorded as token.issued) and the other is invalid_grant; for a pending code the later poll was too soon:
// slow_down, and the interval grows by 5 seconds (3.5), which the next poll feels.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { currentSigningKey } from "@/oidc/keys";
import { digest } from "@/secrets";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { approveUserCode, makeClient, makeUser } from "@/testing/factories";
import { holdClaims } from "@/testing/race";

const DEVICE = "/api/connect/oauth2/device/";
const TOKEN = "/api/connect/oauth2/token/";
const GRANT = "urn:ietf:params:oauth:grant-type:device_code";

afterEach(() => resetClock());

async function started() {
  const owner = await makeUser();
  const user = await makeUser();
  const client = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
  const res = await call("POST", DEVICE, { body: { client_id: client.client_id, scope: "readonly" } });
  expect(res.status).toBe(200);
  const { device_code, user_code } = res.json as { device_code: string; user_code: string };
  const poll = () => call("POST", TOKEN, { body: { grant_type: GRANT, device_code, client_id: client.client_id } });
  const row = await (await db()).deviceAuthorization.findUniqueOrThrow({ where: { deviceCodeDigest: digest(device_code) } });
  return { user, client, poll, user_code, rowId: row.id };
}

/** Fires two polls while the test holds every write to the device authorization, then lets them go. */
async function twoPollsThatReadBeforeEitherWrites(s: Awaited<ReturnType<typeof started>>) {
  // The token endpoint loads (on first use: creates) the signing key before the grant: have it in place, so
  // that the only writes the polls wait for are their own claims.
  await currentSigningKey();
  const hold = await holdClaims("DeviceAuthorization", s.rowId);
  const fired = [s.poll(), s.poll()];
  await hold.waitForClaims(2);
  await hold.release();
  return Promise.all(fired);
}

describe("two polls of one device code that overlap", () => {
  it("approved: one gets the tokens, recorded once as token.issued; the other is invalid_grant", async () => {
    const s = await started();
    await approveUserCode(s.user, s.user_code);
    const results = await twoPollsThatReadBeforeEitherWrites(s);
    const winner = results.find((res) => res.status === 200);
    const loser = results.find((res) => res.status !== 200);
    expect(winner?.json).toMatchObject({ scopes: ["readonly"], user: `/api/user/${s.user.id}/`, token_type: "Bearer" });
    expect({ status: loser?.status, body: loser?.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    // The winner's tokens stay good: a device that lost a race is no attacker.
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: String(winner!.json.access_token) })).status).toBe(200);
    const issued = await (await db()).auditEvent.findMany({ where: { type: "token.issued", userId: s.user.id } });
    expect(issued.map((event) => ({ clientId: event.clientId, detail: JSON.parse(event.detail!) as unknown }))).toEqual([
      { clientId: s.client.client_id, detail: { grant_type: "device_code", scope: "readonly" } },
    ]);
  });

  it("pending: one is authorization_pending, the other slow_down, and the interval has grown by 5 seconds", async () => {
    const s = await started();
    const results = await twoPollsThatReadBeforeEitherWrites(s);
    expect(results.map((res) => ({ status: res.status, body: res.json })).sort((a, b) => a.body.error!.localeCompare(b.body.error!))).toEqual([
      { status: 400, body: { error: "authorization_pending" } },
      { status: 400, body: { error: "slow_down" } },
    ]);
    // The interval is now 10 seconds: a poll 6 seconds later is still too soon, one 11 seconds later is not.
    advanceClock(6_000);
    expect((await s.poll()).json).toEqual({ error: "slow_down" });
    advanceClock(16_000);
    expect((await s.poll()).json).toEqual({ error: "authorization_pending" });
  });
});
