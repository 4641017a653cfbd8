// The client credentials grant (RFC 6749 4.4, docs/rules/tokens.md#client-credentials): a confidential client
// acting for its owner, API scopes only, no refresh token.
import { describe, expect, it } from "vitest";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";

const TOKEN = "/api/connect/oauth2/token/";

async function setup() {
  const owner = await makeUser({ name: "Service Owner" });
  const client = await makeClient({ ownerId: owner.id, grantType: "client_credentials", redirectUris: [] });
  return { owner, client };
}

const grant = (client: { client_id: string; client_secret: string | null }, extra: Record<string, string> = {}) =>
  call("POST", TOKEN, { body: { grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, ...extra } });

describe("client_credentials grant", () => {
  it("issues a token acting for the client's owner, readonly by default, without a refresh token", async () => {
    const { owner, client } = await setup();
    const res = await grant(client);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json).toEqual({
      resource_uri: `/api/oauth2token/${res.json.access_token}/`,
      access_token: expect.any(String),
      scopes: ["readonly"],
      scope: "readonly",
      user: `/api/user/${owner.id}/`,
      expires_in: 3600,
      token_type: "Bearer",
    });
    const me = await call("GET", `/api/user/${owner.id}/`, { token: String(res.json.access_token) });
    expect(me.status).toBe(200);
    expect(me.json.email).toBe(owner.email);
    const event = await (await db()).auditEvent.findFirst({ where: { type: "token.issued", clientId: client.client_id } });
    expect(JSON.parse(event!.detail!)).toEqual({ grant_type: "client_credentials", scope: "readonly" });
  });

  it("takes readwrite, and Basic authentication with a form body", async () => {
    const { client } = await setup();
    const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64");
    const res = await call("POST", TOKEN, {
      headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
      raw: "grant_type=client_credentials&scope=readonly%20readwrite",
    });
    expect(res.status).toBe(200);
    expect(res.json.scope).toBe("readonly readwrite");
  });

  it.each([["openid"], ["readonly profile"], ["readonly admin"]])("refuses scope %s with invalid_scope", async (scope) => {
    const { client } = await setup();
    const res = await grant(client, { scope });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "invalid_scope" });
  });

  it("needs the client's secret", async () => {
    const { client } = await setup();
    const wrong = await grant({ ...client, client_secret: "wrong" });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual({ error: "invalid_client" });
    const none = await call("POST", TOKEN, { body: { grant_type: "client_credentials", client_id: client.client_id } });
    expect(none.status).toBe(401);
  });

  it("is unauthorized_client for clients of other grant types, and a client_credentials client gets no other grant", async () => {
    const { owner, client } = await setup();
    const passwordClient = await makeClient({ ownerId: owner.id });
    const res = await grant(passwordClient);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "unauthorized_client" });
    const password = await grant(client, { grant_type: "password", username: owner.email, password: owner.password });
    expect(password.json).toEqual({ error: "unauthorized_client" });
    const refresh = await grant(client, { grant_type: "refresh_token", refresh_token: "anything" });
    expect(refresh.json).toEqual({ error: "unauthorized_client" });
  });
});
