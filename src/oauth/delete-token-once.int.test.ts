// DELETE /api/accesstoken/<token> (docs/rules/tokens.md#deleting-a-token): 404 for a token already revoked,
// however it was revoked; the grant ends once. An access token revoked alone at the revocation endpoint (RFC
// 7009 2.1) is gone: deleting it is 404 and does not reach its grant. Two deletes that both read the token
// before either ends the grant: one 204, the other 404, and one token.revoked.
import { describe, expect, it } from "vitest";
import { digest } from "@/secrets";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";
import { holdClaims } from "@/testing/race";

type Session = Awaited<ReturnType<typeof passwordSession>>;

const refresh = (s: Session) =>
  call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "refresh_token", refresh_token: s.refreshToken, client_id: s.client.client_id, client_secret: s.client.client_secret } });
const revokedEvents = async (userId: number) => (await db()).auditEvent.count({ where: { type: "token.revoked", userId } });

describe("deleting a token that is, or is being, revoked", () => {
  it("an access token revoked at the revocation endpoint: 404, and its grant's refresh token still works", async () => {
    const s = await passwordSession();
    const revoked = await call("POST", "/api/connect/oauth2/revoke/", { body: { token: s.accessToken, client_id: s.client.client_id, client_secret: s.client.client_secret } });
    expect(revoked.status).toBe(200);
    const res = await call("DELETE", `/api/accesstoken/${s.accessToken}`);
    expect({ status: res.status, body: res.json }).toEqual({ status: 404, body: { error: "no such token" } });
    expect((await refresh(s)).status).toBe(200);
  });

  it("two deletes that read the token before either ends the grant: one 204, the other 404; one token.revoked", async () => {
    const s = await passwordSession();
    const row = await (await db()).accessToken.findUniqueOrThrow({ where: { digest: digest(s.accessToken) } });
    const hold = await holdClaims("Grant", row.grantId);
    const fired = [call("DELETE", `/api/accesstoken/${s.accessToken}`), call("DELETE", `/api/accesstoken/${s.accessToken}`)];
    await hold.waitForClaims(2);
    await hold.release();
    const results = (await Promise.all(fired)).map((res) => ({ status: res.status, body: res.json ?? null })).sort((a, b) => a.status - b.status);
    expect(results).toEqual([
      { status: 204, body: null },
      { status: 404, body: { error: "no such token" } },
    ]);
    expect(await revokedEvents(s.user.id)).toBe(1);
    expect((await refresh(s)).json).toEqual({ error: "invalid_grant" });
  });
});
