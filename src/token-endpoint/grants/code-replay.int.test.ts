// RFC 6749 4.1.2 / RFC 9700 4.2.4 (docs/rules/tokens.md#authorization-codes,
// docs/rules/operations.md#audit-log): any second use of an authorization code is invalid_grant and revokes
// every token issued from it, whatever else is wrong with the second request (a replay with another
// redirect_uri is still a replay), and is recorded as code.reused; a second use that read the code before the
// first had claimed it is recorded as such (detail.concurrent).
import { describe, expect, it } from "vitest";
import { currentSigningKey } from "@/oidc/keys";
import { digest } from "@/secrets";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { approvedCode } from "@/testing/factories";
import { holdClaims } from "@/testing/race";

const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test/callback";

/** A code for a confidential code client, through the authorization endpoint and the consent form. */
async function codeScene() {
  const { user, client, code } = await approvedCode(REDIRECT);
  const exchange = (redirectUri = REDIRECT) =>
    call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: client.client_id, client_secret: client.client_secret } });
  const reused = async () =>
    (await (await db()).auditEvent.findMany({ where: { type: "code.reused", userId: user.id }, orderBy: { id: "asc" } })).map((event) => ({
      clientId: event.clientId,
      detail: JSON.parse(event.detail!) as unknown,
    }));
  const works = async (accessToken: unknown) => (await call("GET", `/api/user/${user.id}/`, { token: String(accessToken) })).status;
  return { client, code, exchange, reused, works };
}

describe("a second use of an authorization code", () => {
  it("with another redirect_uri is still a replay: invalid_grant, the tokens of the first use revoked, code.reused", async () => {
    const s = await codeScene();
    const first = await s.exchange();
    expect(first.status).toBe(200);
    expect(await s.works(first.json.access_token)).toBe(200);
    const replay = await s.exchange("https://client.example.test/elsewhere");
    expect({ status: replay.status, body: replay.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    expect(await s.works(first.json.access_token)).toBe(401);
    expect(await s.reused()).toEqual([{ clientId: s.client.client_id, detail: { grant_type: "authorization_code" } }]);
  });

  it("after the grant has ended is recorded again: every replay is code.reused", async () => {
    const s = await codeScene();
    expect((await s.exchange()).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await s.exchange()).json).toEqual({ error: "invalid_grant" });
    const once = { clientId: s.client.client_id, detail: { grant_type: "authorization_code" } };
    expect(await s.reused()).toEqual([once, once]);
  });

  it("that read the code before the first claimed it: invalid_grant, both revoked, code.reused with concurrent: true", async () => {
    const s = await codeScene();
    await currentSigningKey(); // created on first use: a write the exchanges would otherwise queue for
    const row = await (await db()).authorizationCode.findUniqueOrThrow({ where: { digest: digest(s.code) } });
    const hold = await holdClaims("AuthorizationCode", row.id);
    const fired = [s.exchange(), s.exchange()];
    await hold.waitForClaims(2);
    await hold.release();
    const results = await Promise.all(fired);
    const winner = results.find((res) => res.status === 200);
    const loser = results.find((res) => res.status !== 200);
    expect(winner?.json).toMatchObject({ scopes: ["readonly"], token_type: "Bearer" });
    expect({ status: loser?.status, body: loser?.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    expect(await s.works(winner!.json.access_token)).toBe(401);
    expect(await s.reused()).toEqual([{ clientId: s.client.client_id, detail: { grant_type: "authorization_code", concurrent: true } }]);
  });
});
