// docs/rules/tokens.md#authorization-codes and docs/rules/tokens.md#device-flow: a code is claimed and its
// tokens issued in one transaction, so a failure while issuing (here the database refusing the access token's
// insert, as a full disk would) is a server_error that consumes nothing: neither an authorization code nor an
// approved device code is spent or revoked by it, and the client's retry gets the tokens.
import { describe, expect, it } from "vitest";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { BASE, call } from "@/testing/app";
import { approvedDeviceCode, makeClient, makeUser } from "@/testing/factories";
import { refuseInserts } from "@/testing/faults";
import { sessionCookie } from "@/testing/session";

const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test/callback";

/** Approves the consent form the authorization request led to. */
async function approve(userId: number, cookie: string, consentLocation: string) {
  const sealed = new URL(consentLocation, BASE).searchParams.get("request")!;
  return call("POST", "/consent/decide", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie },
    raw: new URLSearchParams({ request: sealed, csrf: consentCsrfToken(userId, sealed), decision: "approve" }).toString(),
  });
}

/** The exchange fails while the database refuses the user's access tokens, then succeeds once it does not. */
async function failsThenWorks(userId: number, exchange: () => ReturnType<typeof call>) {
  const undo = await refuseInserts("AccessToken", "userId", userId);
  let failed: Awaited<ReturnType<typeof call>>;
  try {
    failed = await exchange();
  } finally {
    await undo();
  }
  expect({ status: failed.status, body: failed.json }).toEqual({ status: 500, body: { error: "server_error" } });
  const retried = await exchange();
  expect(retried.status).toBe(200);
  expect((await call("GET", `/api/user/${userId}/`, { token: String(retried.json.access_token) })).status).toBe(200);
}

describe("a failure while issuing tokens consumes nothing", () => {
  it("the authorization code still works afterwards", async () => {
    const owner = await makeUser();
    const user = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code" });
    const cookie = await sessionCookie(user);
    const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "s" });
    const first = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie } });
    const decided = await approve(user.id, cookie, first.headers.get("location")!);
    const code = new URL(decided.headers.get("location")!).searchParams.get("code")!;
    await failsThenWorks(user.id, () =>
      call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret } }),
    );
  });

  it("the approved device code still works afterwards", async () => {
    const { user, poll } = await approvedDeviceCode();
    await failsThenWorks(user.id, poll);
  });
});
