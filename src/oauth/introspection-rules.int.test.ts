// RFC 7662 at POST /api/connect/oauth2/introspect/ together with RFC 7009 2.1: only an authenticated
// (confidential) client may ask; a refresh token is described without the API audience, which belongs to
// access tokens (docs/rules/tokens.md#resource-indicators); revoking a refresh token ends every token of its
// grant, and only those: another grant's tokens stay active. A body that cannot be read is invalid_request.
import { describe, expect, it } from "vitest";
import { call } from "@/testing/app";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";

const INTROSPECT = "/api/connect/oauth2/introspect/";
const REVOKE = "/api/connect/oauth2/revoke/";
const TOKEN = "/api/connect/oauth2/token/";

type Session = Awaited<ReturnType<typeof passwordSession>>;
const credentials = (s: Session) => ({ client_id: s.client.client_id, client_secret: s.client.client_secret });
const introspect = (s: Session, token: string) => call("POST", INTROSPECT, { body: { token, ...credentials(s) } });

describe("introspection", () => {
  it("describes a refresh token without the access tokens' audience", async () => {
    const s = await passwordSession("readonly");
    const res = await introspect(s, s.refreshToken);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ active: true, token_type: "refresh_token", client_id: s.client.client_id, scope: "readonly" });
    expect(Object.keys(res.json)).not.toContain("aud");
    const access = await introspect(s, s.accessToken);
    expect(access.json).toMatchObject({ active: true, token_type: "Bearer", aud: expect.any(String) as unknown });
  });

  it("refuses a public client, which cannot authenticate, with invalid_client", async () => {
    const owner = await makeUser();
    const publicClient = await makeClient({ ownerId: owner.id, grantType: "authorization_code", isPublic: true });
    const s = await passwordSession();
    const res = await call("POST", INTROSPECT, { body: { token: s.accessToken, client_id: publicClient.client_id } });
    expect({ status: res.status, body: res.json }).toEqual({ status: 401, body: { error: "invalid_client" } });
  });

  it("answers invalid_request to an empty form body", async () => {
    const res = await call("POST", INTROSPECT, { headers: { "content-type": "application/x-www-form-urlencoded" }, raw: "" });
    expect({ status: res.status, body: res.json }).toEqual({ status: 400, body: { error: "invalid_request" } });
  });

  it("after a refresh token is revoked, its grant's tokens are inactive and another grant's still active and usable", async () => {
    const revoked = await passwordSession();
    const other = await passwordSession();
    expect((await call("POST", REVOKE, { body: { token: revoked.refreshToken, ...credentials(revoked) } })).status).toBe(200);
    for (const token of [revoked.accessToken, revoked.refreshToken]) {
      expect((await introspect(revoked, token)).json).toEqual({ active: false });
    }
    for (const token of [other.accessToken, other.refreshToken]) {
      expect((await introspect(other, token)).json).toMatchObject({ active: true });
    }
    const refreshed = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: other.refreshToken, ...credentials(other) } });
    expect(refreshed.status).toBe(200);
  });
});
