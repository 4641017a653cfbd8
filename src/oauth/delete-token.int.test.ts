import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";
import { db } from "@/db/client";

afterEach(() => resetClock());

const refresh = (session: Awaited<ReturnType<typeof passwordSession>>, refreshToken: string) =>
  call("POST", "/api/connect/oauth2/token/", {
    body: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret },
  });

describe("deleting a token (docs/rules/tokens.md#deleting-a-token)", () => {
  it("DELETE /api/accesstoken/<token> disconnects: 204, then every token of the grant is dead", async () => {
    const session = await passwordSession();
    const rotated = await refresh(session, session.refreshToken);
    expect(rotated.status).toBe(200);
    const res = await call("DELETE", `/api/accesstoken/${session.accessToken}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await call("GET", `/api/user/${session.user.id}/`, { token: session.accessToken })).status).toBe(401);
    expect((await call("GET", `/api/user/${session.user.id}/`, { token: String(rotated.json.access_token) })).status).toBe(401);
    expect((await refresh(session, String(rotated.json.refresh_token))).json).toEqual({ error: "invalid_grant" });
  });

  it("DELETE at the token record's resource_uri does the same", async () => {
    const session = await passwordSession();
    const res = await call("DELETE", `/api/oauth2token/${session.accessToken}/`);
    expect(res.status).toBe(204);
    expect((await call("GET", `/api/user/${session.user.id}/`, { token: session.accessToken })).status).toBe(401);
  });

  it("is 404 for an unknown token and for one already deleted", async () => {
    const session = await passwordSession();
    expect((await call("DELETE", "/api/accesstoken/unknown-token")).json).toEqual({ error: "no such token" });
    expect((await call("DELETE", `/api/accesstoken/${session.accessToken}`)).status).toBe(204);
    const again = await call("DELETE", `/api/accesstoken/${session.accessToken}/`);
    expect(again.status).toBe(404);
    expect(again.json).toEqual({ error: "no such token" });
  });

  it("is 204 for an expired token, and it still ends the grant's refresh token", async () => {
    const session = await passwordSession();
    advanceClock(2 * 3600 * 1000);
    expect((await call("DELETE", `/api/accesstoken/${session.accessToken}`)).status).toBe(204);
    expect((await refresh(session, session.refreshToken)).json).toEqual({ error: "invalid_grant" });
  });

  it("leaves other grants of the same user and client alone", async () => {
    const session = await passwordSession();
    const second = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "password", client_id: session.client.client_id, client_secret: session.client.client_secret, username: session.user.email, password: session.user.password },
    });
    expect((await call("DELETE", `/api/accesstoken/${session.accessToken}`)).status).toBe(204);
    expect((await call("GET", `/api/user/${session.user.id}/`, { token: String(second.json.access_token) })).status).toBe(200);
  });

  it("is 405 with Allow for other methods", async () => {
    const res = await call("GET", "/api/accesstoken/whatever");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("DELETE, OPTIONS");
  });
});

describe("secrets at rest", () => {
  it("the database holds no token or client secret in plaintext, only digests", async () => {
    const session = await passwordSession();
    const rotated = await refresh(session, session.refreshToken);
    const secrets = [session.accessToken, session.refreshToken, String(rotated.json.access_token), String(rotated.json.refresh_token), session.client.client_secret!];
    const client = await db();
    const rows = [
      ...(await client.accessToken.findMany({ where: { userId: session.user.id } })),
      ...(await client.refreshToken.findMany({ where: { userId: session.user.id } })),
      ...(await client.client.findMany({ where: { ownerId: session.user.id } })),
      ...(await client.user.findMany({ where: { id: session.user.id } })),
    ];
    expect(rows.length).toBeGreaterThanOrEqual(6);
    const dump = JSON.stringify(rows);
    for (const secret of secrets) expect(dump).not.toContain(secret);
    expect(dump).not.toContain(session.user.password);
    const { createHash } = await import("node:crypto");
    expect(dump).toContain(createHash("sha256").update(session.accessToken).digest("hex"));
  });
});
