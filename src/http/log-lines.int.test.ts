// docs/rules/endpoints.md#records-and-identifiers, docs/rules/permission-requests.md#the-request-record: paths
// and query strings holding a token, a code or a secret are redacted in every log line, and a permission token
// never appears in one. This reads what a real server instance prints (a separate process at LOG_LEVEL=debug,
// src/testing/instance.ts) while it answers real requests over a socket: ordinary ones, and ones that fail
// inside the server on paths that carry tokens (the database refuses the write, src/testing/faults.ts), which
// are the requests whose path the server logs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nowMs } from "@/clock";
import { createBundle } from "@/bundles/create-bundle";
import { digest, randomSecret } from "@/secrets";
import { db, write } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { refuseUpdates } from "@/testing/faults";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";
import { startInstance, type Instance } from "@/testing/instance";

let instance: Instance;
beforeAll(async () => {
  instance = await startInstance({ env: { LOG_LEVEL: "debug" } });
}, 120_000);
afterAll(() => instance.stop());

type LogLine = { level: string; message: string; path?: string; error?: string; [key: string]: unknown };

const send = (path: string, init: RequestInit = {}) => fetch(instance.url + path, { redirect: "manual", ...init });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The instance's JSON log lines so far. */
function logLines(): LogLine[] {
  return instance
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine);
}

describe("log lines of a real server instance", () => {
  it("carry no token, code, secret or password, and show the paths that hold them redacted", async () => {
    // A user with a token pair from a password client, and a first-party token to redeem with.
    const session = await passwordSession();
    const firstParty = await makeClient({ ownerId: session.user.id, firstParty: true });
    const firstPartyGrant = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "password", client_id: firstParty.client_id, client_secret: firstParty.client_secret, username: session.user.email, password: session.user.password, scope: "readonly readwrite" },
    });
    const firstPartyToken = firstPartyGrant.json.access_token as string;
    // A pending permission request that this user is asked to grant, with its token.
    const requester = await makeUser();
    const bundle = await createBundle({ ownerId: session.user.id, name: "Logged bundle" });
    const permissionToken = randomSecret();
    const at = nowMs();
    const request = await write((tx) =>
      tx.permissionRequest.create({
        data: {
          tokenDigest: digest(permissionToken), bundleId: bundle.id, userAllowedId: requester.id, userTargetId: session.user.id,
          requestedById: requester.id, redeemUrl: `${BASE}/redeem`, ttl: 3600, status: "pending", pendingKey: `${bundle.id}:${requester.id}:${session.user.id}`,
          createdAt: new Date(at), expiresAt: new Date(at + 3600_000),
        },
      }),
    );
    // An implicit client, whose secret may travel in the authorization request's query string.
    const implicit = await makeClient({ ownerId: requester.id, grantType: "implicit" });
    const secrets = {
      "access token": session.accessToken,
      "refresh token": session.refreshToken,
      "client secret": session.client.client_secret!,
      password: session.user.password,
      "first-party token": firstPartyToken,
      "permission token": permissionToken,
      "implicit client secret": implicit.client_secret!,
    };

    // Ordinary requests whose paths, queries or bodies hold secrets.
    expect((await send(`/api/bundle_permission_request/${permissionToken}/`, { headers: bearer(session.accessToken) })).status).toBe(200);
    const refresh = await send("/api/connect/oauth2/token/", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: session.refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret! }),
    });
    expect(refresh.status).toBe(200);
    const refreshed = (await refresh.json()) as { access_token: string; refresh_token: string };
    Object.assign(secrets, { "refreshed access token": refreshed.access_token, "refreshed refresh token": refreshed.refresh_token });
    const query = new URLSearchParams({ response_type: "token", client_id: implicit.client_id, client_secret: implicit.client_secret!, scope: "readonly admin", state: "st" });
    // Signed out and invalid (the admin scope): the error page, not a redirect
    // (docs/rules/tokens.md#authorization-errors).
    const refused = await send(`/api/connect/oauth2/auth/?${query}`, { headers: { cookie: "" } });
    expect(refused.status).toBe(400);

    // Requests that fail inside the server on paths holding a token: the server logs their paths.
    const grantId = (await (await db()).accessToken.findUniqueOrThrow({ where: { digest: digest(firstPartyToken) } })).grantId;
    const undoGrant = await refuseUpdates("Grant", "id", grantId);
    const undoRequest = await refuseUpdates("PermissionRequest", "id", request.id);
    try {
      const deleted = await send(`/api/accesstoken/${firstPartyToken}`, { method: "DELETE" });
      expect({ status: deleted.status, body: await deleted.json() }).toEqual({ status: 500, body: { error: "server_error" } });
      const redeemed = await send(`/api/bundle_permission_request/${permissionToken}/`, { method: "PUT", headers: bearer(firstPartyToken) });
      expect({ status: redeemed.status, body: await redeemed.json() }).toEqual({ status: 500, body: { error: "server_error" } });
    } finally {
      await undoGrant();
      await undoRequest();
    }
    await instance.printed(/"path":"\/api\/bundle_permission_request\/[^"]*"/);

    const lines = logLines();
    const failures = lines.filter((line) => line.message === "unexpected error").map((line) => line.path);
    expect(failures).toEqual(["/api/accesstoken/[redacted]", "/api/bundle_permission_request/[redacted]/"]);
    expect(lines.some((line) => line.message === "authorization request refused")).toBe(true);
    const output = instance.output();
    for (const [name, secret] of Object.entries(secrets)) expect(output.includes(secret), `${name} in the log`).toBe(false);
  }, 120_000);
});
