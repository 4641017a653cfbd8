// Nothing secret is kept in a pushed request (RFC 9126 2.1: client authentication is about the push, not the
// authorization request; docs/rules/accounts.md#secrets-at-rest): the stored row, read straight from the
// database, holds neither the client_secret nor any other client authentication parameter, nor the request_uri
// itself (only its digest); and the request still works.
import { describe, expect, it } from "vitest";
import { s256 } from "@/oauth/pkce";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const PAR = "/api/connect/oauth2/par/";
const AUTH = "/api/connect/oauth2/auth/";
const REDIRECT = "https://client.example.test/callback";
const VERIFIER = "stored-secrets-verifier-".padEnd(64, "s");

async function setup(grantType: "authorization_code" | "implicit" = "authorization_code") {
  const user = await makeUser();
  const client = await makeClient({ ownerId: user.id, grantType, firstParty: true });
  return { user, client, cookie: await sessionCookie(user) };
}

const push = (body: Record<string, string>, headers: Record<string, string> = {}) =>
  call("POST", PAR, { raw: new URLSearchParams(body).toString(), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });

/** The stored row of a request_uri, as the database holds it, every column as text. */
async function storedRow(clientId: string): Promise<string> {
  const client = await (await db()).client.findUnique({ where: { clientId } });
  const rows = await (await db()).pushedAuthorizationRequest.findMany({ where: { clientId: client!.id } });
  expect(rows).toHaveLength(1);
  return JSON.stringify(rows[0]);
}

describe("a pushed request's stored row", () => {
  it("does not keep the client_secret sent in the body, and the flow still gives tokens", async () => {
    const s = await setup();
    const secret = s.client.client_secret!;
    const res = await push({ response_type: "code", client_id: s.client.client_id, client_secret: secret, redirect_uri: REDIRECT, scope: "readonly", state: "kept", code_challenge: s256(VERIFIER), code_challenge_method: "S256" });
    expect(res.status).toBe(201);
    const requestUri = String(res.json.request_uri);
    const row = await storedRow(s.client.client_id);
    expect(row).not.toContain(secret);
    expect(row).not.toContain("client_secret");
    expect(row).not.toContain(requestUri.split(":").pop()!);
    const params = JSON.parse((JSON.parse(row) as { params: string }).params) as Array<[string, string]>;
    expect(params.map(([name]) => name).sort()).toEqual(["code_challenge", "code_challenge_method", "redirect_uri", "response_type", "scope", "state"]);

    const authorized = await call("GET", `${AUTH}?${new URLSearchParams({ client_id: s.client.client_id, request_uri: requestUri })}`, { headers: { cookie: s.cookie } });
    expect(authorized.status).toBe(302);
    const location = new URL(authorized.headers.get("location")!);
    expect(location.searchParams.get("state")).toBe("kept");
    const tokens = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "authorization_code", code: location.searchParams.get("code"), redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: s.client.client_id, client_secret: secret },
    });
    expect(tokens.status).toBe(200);
  });

  it("does not keep a client_secret sent with HTTP Basic authentication either", async () => {
    const s = await setup();
    const secret = s.client.client_secret!;
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(s.client.client_id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
    const res = await push({ response_type: "code", redirect_uri: REDIRECT, scope: "readonly", state: "basic" }, { authorization: basic });
    expect(res.status).toBe(201);
    const row = await storedRow(s.client.client_id);
    expect(row).not.toContain(secret);
    expect(row).not.toContain(basic);
  });

  it("does not keep the client_secret of an implicit client's pushed request, which still gives its token", async () => {
    const s = await setup("implicit");
    const secret = s.client.client_secret!;
    const res = await push({ response_type: "token", client_id: s.client.client_id, client_secret: secret, redirect_uri: REDIRECT, scope: "readonly", state: "implicit" });
    expect(res.status).toBe(201);
    const row = await storedRow(s.client.client_id);
    expect(row).not.toContain(secret);
    const authorized = await call("GET", `${AUTH}?${new URLSearchParams({ client_id: s.client.client_id, request_uri: String(res.json.request_uri) })}`, { headers: { cookie: s.cookie } });
    expect(authorized.status).toBe(302);
    const fragment = new URLSearchParams(new URL(authorized.headers.get("location")!).hash.slice(1));
    expect(fragment.get("access_token")).toMatch(/^[\w-]{43}$/);
    expect(fragment.get("state")).toBe("implicit");
  });

  it.each([
    ["client_assertion", { client_assertion: "eyJhbGciOiJIUzI1NiJ9.e30.secret-assertion", client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" }],
  ])("does not keep %s, whether the push is accepted or refused", async (_name, extra) => {
    const s = await setup();
    const res = await push({ response_type: "code", client_id: s.client.client_id, client_secret: s.client.client_secret!, redirect_uri: REDIRECT, scope: "readonly", state: "assert", ...extra });
    if (res.status === 201) {
      const row = await storedRow(s.client.client_id);
      for (const value of Object.values(extra)) expect(row).not.toContain(value);
    } else {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      const client = await (await db()).client.findUnique({ where: { clientId: s.client.client_id } });
      expect(await (await db()).pushedAuthorizationRequest.count({ where: { clientId: client!.id } })).toBe(0);
    }
  });
});

describe("a pushed request's stored row keeps only what the authorization endpoint reads", () => {
  it("drops a code_verifier, a password or any other parameter the authorization request does not define", async () => {
    const s = await setup();
    const res = await push({
      response_type: "code",
      client_id: s.client.client_id,
      client_secret: s.client.client_secret!,
      redirect_uri: REDIRECT,
      scope: "readonly",
      state: "only-known",
      code_challenge: s256(VERIFIER),
      code_challenge_method: "S256",
      code_verifier: VERIFIER,
      password: "hunter2-not-kept",
      refresh_token: "refresh-not-kept",
    });
    expect(res.status).toBe(201);
    const row = await storedRow(s.client.client_id);
    for (const value of [VERIFIER, "hunter2-not-kept", "refresh-not-kept", s.client.client_secret!]) expect(row).not.toContain(value);
  });

  it("keeps nothing secret from a JSON body either", async () => {
    const s = await setup();
    const res = await call("POST", PAR, { body: { response_type: "code", client_id: s.client.client_id, client_secret: s.client.client_secret, redirect_uri: REDIRECT, scope: "readonly", state: "json" } });
    expect(res.status).toBe(201);
    expect(await storedRow(s.client.client_id)).not.toContain(s.client.client_secret!);
  });
});
