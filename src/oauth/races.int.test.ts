// Single use under real concurrency at the token endpoint (docs/rules/tokens.md#authorization-codes,
// docs/rules/tokens.md#refresh): of any number of concurrent uses of one refresh token or one authorization
// code exactly one succeeds, and the racing reuse revokes every token of the grant, the winner's included (no
// grace period). Each request authenticates its client with its credentials in the body (one indexed read, no
// session), and its body is held at a barrier (src/testing/race.ts) until every handler has started reading
// it: `barrier.arrived` shows that they overlapped.
import { describe, expect, it } from "vitest";
import * as tokenRoute from "../../app/api/connect/oauth2/token/route";
import { BASE, call } from "@/testing/app";
import { approvedCode, passwordSession } from "@/testing/factories";
import { Barrier, heldBody, together } from "@/testing/race";

const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test/callback";

/** POSTs `body` to the token endpoint, its body held at `barrier`. */
async function heldTokenRequest(barrier: Barrier, body: Record<string, unknown>) {
  const request = new Request(BASE + TOKEN, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: heldBody(barrier, JSON.stringify(body)),
    // @ts-expect-error Node's fetch needs duplex for a streamed request body.
    duplex: "half",
  });
  const response = await tokenRoute.POST(request, { params: Promise.resolve({}) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const userStatus = async (userId: number, token: unknown) => (await call("GET", `/api/user/${userId}/`, { token: String(token) })).status;

describe("concurrent uses of one refresh token", () => {
  it("of ten refreshes that overlap exactly one succeeds, and the reuse revokes the grant, the winner's tokens too", async () => {
    const session = await passwordSession();
    const barrier = new Barrier(10);
    const body = { grant_type: "refresh_token", refresh_token: session.refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret };
    const results = await together(barrier, Array.from({ length: 10 }, () => heldTokenRequest(barrier, body)));
    // All ten handlers had started reading their bodies before any body arrived: they overlapped.
    expect(barrier.arrived).toBe(10);
    const ok = results.filter((res) => res.status === 200);
    expect(ok).toHaveLength(1);
    for (const res of results.filter((r) => r.status !== 200)) expect(res).toEqual({ status: 400, json: { error: "invalid_grant" } });
    expect(await userStatus(session.user.id, session.accessToken)).toBe(401);
    expect(await userStatus(session.user.id, ok[0]!.json.access_token)).toBe(401);
    const next = await call("POST", TOKEN, { body: { ...body, refresh_token: ok[0]!.json.refresh_token } });
    expect({ status: next.status, body: next.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
  });
});

describe("concurrent exchanges of one authorization code", () => {
  /** A code for a confidential code client, through the authorization endpoint and the consent form. */
  async function code() {
    const { user, client, code: value } = await approvedCode(REDIRECT);
    return { user, client, value };
  }

  it("of five exchanges that overlap exactly one succeeds, and the tokens it got are revoked", async () => {
    const c = await code();
    const barrier = new Barrier(5);
    const body = { grant_type: "authorization_code", code: c.value, redirect_uri: REDIRECT, client_id: c.client.client_id, client_secret: c.client.client_secret };
    const results = await together(barrier, Array.from({ length: 5 }, () => heldTokenRequest(barrier, body)));
    expect(barrier.arrived).toBe(5);
    const ok = results.filter((res) => res.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.json).toMatchObject({ user: `/api/user/${c.user.id}/`, scopes: ["readonly"], token_type: "Bearer" });
    for (const res of results.filter((r) => r.status !== 200)) expect(res).toEqual({ status: 400, json: { error: "invalid_grant" } });
    expect(await userStatus(c.user.id, ok[0]!.json.access_token)).toBe(401);
    const refreshed = await call("POST", TOKEN, {
      body: { grant_type: "refresh_token", refresh_token: ok[0]!.json.refresh_token, client_id: c.client.client_id, client_secret: c.client.client_secret },
    });
    expect({ status: refreshed.status, body: refreshed.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
  });
});
