// RFC 7009 2.2 and 2.2.1 at POST /api/connect/oauth2/revoke/: a revocation answers 200 with an empty body that
// no cache may keep, also for a token that had been revoked already (which ends nothing, so the audit log
// records no second token.revoked, docs/rules/operations.md#audit-log); a body that cannot be read is
// invalid_request and revokes nothing.
import { describe, expect, it } from "vitest";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";

const REVOKE = "/api/connect/oauth2/revoke/";

const revokedEvents = async (userId: number) =>
  (await (await db()).auditEvent.findMany({ where: { type: "token.revoked", userId }, orderBy: { id: "asc" } })).map((event) => JSON.parse(event.detail!) as unknown);

describe("the revocation endpoint's answers", () => {
  it("revoking an access token twice: 200, empty and no-store, both times; one token.revoked", async () => {
    const s = await passwordSession();
    const body = { token: s.accessToken, token_type_hint: "access_token", client_id: s.client.client_id, client_secret: s.client.client_secret };
    for (let i = 0; i < 2; i++) {
      const res = await call("POST", REVOKE, { body });
      expect({ status: res.status, text: res.text, cacheControl: res.headers.get("cache-control"), pragma: res.headers.get("pragma") }).toEqual({
        status: 200,
        text: "",
        cacheControl: "no-store",
        pragma: "no-cache",
      });
      // Recorded by the revocation that ended the token, not by the one that found it ended.
      expect(await revokedEvents(s.user.id)).toEqual([{ via: "revocation endpoint", token_type: "access_token" }]);
      expect((await call("GET", `/api/user/${s.user.id}/`, { token: s.accessToken })).status).toBe(401);
    }
  });

  it("revoking a refresh token twice ends its grant once: one token.revoked", async () => {
    const s = await passwordSession();
    const body = { token: s.refreshToken, client_id: s.client.client_id, client_secret: s.client.client_secret };
    for (let i = 0; i < 2; i++) expect({ status: (await call("POST", REVOKE, { body })).status }).toEqual({ status: 200 });
    expect(await revokedEvents(s.user.id)).toEqual([{ grant_type: "password", via: "revocation endpoint", token_type: "refresh_token" }]);
  });

  it("an empty form body is invalid_request and revokes nothing", async () => {
    const s = await passwordSession();
    const res = await call("POST", REVOKE, { headers: { "content-type": "application/x-www-form-urlencoded" }, raw: "" });
    expect({ status: res.status, body: res.json }).toEqual({ status: 400, body: { error: "invalid_request" } });
    expect((await call("GET", `/api/user/${s.user.id}/`, { token: s.accessToken })).status).toBe(200);
    expect(await revokedEvents(s.user.id)).toEqual([]);
  });
});
