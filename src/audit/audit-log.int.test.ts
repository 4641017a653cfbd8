// The audit log (docs/rules/operations.md#audit-log): each security event is recorded where it happens, with
// its user, client and address, in the same transaction as the change it records; and no event ever holds a
// token, code, secret or password. (signin.succeeded/failed and permission_request.created are proven in
// src/users/sign-in.int.test.ts and src/permission-requests/abuse.int.test.ts, signing_key.rotated below.)
import { describe, expect, it, vi } from "vitest";
import { deleteOwnClient, rotateClientSecret } from "@/clients/manage-clients";
import { listMail } from "@/email/list-mail";
import { disconnectApp } from "@/grants/connected-apps";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { pruneTokens } from "@/maintenance/prune-tokens";
import { rotateSigningKey } from "@/oidc/keys";
import { db } from "@/db/client";
import { nowMs } from "@/clock";
import { call } from "@/testing/app";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";
import { runCli } from "@/testing/cli";

// Two tests start the CLI, a new Node process loading tsx: on a loaded machine one start can take 10-30 s.
vi.setConfig({ testTimeout: 120_000 });

const ISS = "http://localhost:3000";
const REDIRECT = "https://client.example.test/callback";
const TOKEN = "/api/connect/oauth2/token/";
/** Every secret the tests below handle: none may appear in any stored event. */
const secrets = new Set<string>();
const keep = <T extends string | null | undefined>(value: T): T => {
  if (value) secrets.add(value);
  return value;
};

async function events(type: string, where: { userId?: number; clientId?: string } = {}) {
  const rows = await (await db()).auditEvent.findMany({ where: { type, ...where }, orderBy: { id: "asc" } });
  return rows.map((row) => ({ ...row, detail: row.detail ? (JSON.parse(row.detail) as Record<string, unknown>) : null }));
}

async function codeScene(options: { isPublic?: boolean } = {}) {
  const owner = await makeUser({ name: "Client Owner" });
  const user = await makeUser({ name: "Resource Owner" });
  keep(user.password);
  const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", ...options });
  keep(client.client_secret);
  const cookie = await sessionCookie(user);
  const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "s" });
  const first = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie } });
  const sealed = new URL(first.headers.get("location")!, ISS).searchParams.get("request")!;
  const form = new URLSearchParams({ request: sealed, csrf: consentCsrfToken(user.id, sealed), decision: "approve" });
  const decided = await call("POST", "/consent/decide", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie, "x-forwarded-for": "198.51.100.9" },
    raw: form.toString(),
  });
  expect(decided.status).toBe(303);
  const code = keep(new URL(decided.headers.get("location")!).searchParams.get("code")!);
  const exchange = () =>
    call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret } });
  return { owner, user, client, code, exchange };
}

describe("the audit log records each security event", () => {
  it("consent.granted (with the address) and token.issued for the authorization code grant", async () => {
    const s = await codeScene();
    const answer = await s.exchange();
    expect(answer.status).toBe(200);
    keep(answer.json.access_token as string);
    keep(answer.json.refresh_token as string);
    const [consent] = await events("consent.granted", { userId: s.user.id });
    expect(consent).toMatchObject({ clientId: s.client.client_id, ip: "198.51.100.9", detail: { scope: "readonly", remembered: true } });
    const [issued] = await events("token.issued", { userId: s.user.id });
    expect(issued).toMatchObject({ clientId: s.client.client_id, detail: { grant_type: "authorization_code", scope: "readonly" } });
  });

  it("code.reused when a code comes back, and the grant's tokens are revoked in the same step", async () => {
    const s = await codeScene();
    expect((await s.exchange()).status).toBe(200);
    const replay = await s.exchange();
    expect(replay.status).toBe(400);
    expect(replay.json).toEqual({ error: "invalid_grant" });
    const [reused] = await events("code.reused", { userId: s.user.id });
    expect(reused).toMatchObject({ clientId: s.client.client_id, detail: { grant_type: "authorization_code" } });
  });

  it("token.issued for the password and client credentials grants, token.refreshed and token.reuse_detected", async () => {
    const session = await passwordSession();
    keep(session.user.password);
    keep(session.client.client_secret);
    keep(session.accessToken);
    keep(session.refreshToken);
    expect(await events("token.issued", { userId: session.user.id })).toMatchObject([{ clientId: session.client.client_id, detail: { grant_type: "password" } }]);

    const refresh = (token: string) =>
      call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: token, client_id: session.client.client_id, client_secret: session.client.client_secret } });
    const rotated = await refresh(session.refreshToken);
    expect(rotated.status).toBe(200);
    keep(rotated.json.access_token as string);
    keep(rotated.json.refresh_token as string);
    expect(await events("token.refreshed", { userId: session.user.id })).toMatchObject([{ clientId: session.client.client_id, detail: { scope: "readonly readwrite" } }]);
    const reuse = await refresh(session.refreshToken);
    expect(reuse.status).toBe(400);
    expect(await events("token.reuse_detected", { userId: session.user.id })).toMatchObject([{ clientId: session.client.client_id, detail: { grant_type: "password" } }]);

    const machine = await makeClient({ ownerId: session.user.id, grantType: "client_credentials", redirectUris: [] });
    keep(machine.client_secret);
    const cc = await call("POST", TOKEN, { body: { grant_type: "client_credentials", client_id: machine.client_id, client_secret: machine.client_secret } });
    expect(cc.status).toBe(200);
    keep(cc.json.access_token as string);
    expect(await events("token.issued", { clientId: machine.client_id })).toMatchObject([{ userId: session.user.id, detail: { grant_type: "client_credentials" } }]);
  });

  it("token.revoked by deleting a token, at the revocation endpoint, and with consent.revoked on disconnect", async () => {
    const session = await passwordSession();
    keep(session.accessToken);
    keep(session.refreshToken);
    keep(session.client.client_secret);
    expect((await call("DELETE", `/api/oauth2token/${session.accessToken}/`)).status).toBe(204);
    expect(await events("token.revoked", { userId: session.user.id })).toMatchObject([{ clientId: session.client.client_id, detail: { via: "token deleted" } }]);
    expect((await call("DELETE", `/api/oauth2token/${session.accessToken}/`)).status).toBe(404); // nothing ended: no event
    expect(await events("token.revoked", { userId: session.user.id })).toHaveLength(1);

    const second = await passwordSession();
    keep(second.accessToken);
    keep(second.refreshToken);
    keep(second.client.client_secret);
    const revoke = (token: string, hint: string) =>
      call("POST", "/api/connect/oauth2/revoke/", { body: { token, token_type_hint: hint, client_id: second.client.client_id, client_secret: second.client.client_secret } });
    expect((await revoke(second.accessToken, "access_token")).status).toBe(200);
    expect((await revoke(second.refreshToken, "refresh_token")).status).toBe(200);
    expect((await events("token.revoked", { userId: second.user.id })).map((event) => event.detail)).toEqual([
      { via: "revocation endpoint", token_type: "access_token" },
      { grant_type: "password", via: "revocation endpoint", token_type: "refresh_token" },
    ]);

    const s = await codeScene();
    const issued = await s.exchange();
    keep(issued.json.access_token as string);
    keep(issued.json.refresh_token as string);
    expect(await disconnectApp({ userId: s.user.id, clientId: s.client.client_id })).toEqual({ found: true, consentForgotten: true, grantsRevoked: 1, tokensRevoked: 2 });
    expect(await events("token.revoked", { userId: s.user.id })).toMatchObject([{ clientId: s.client.client_id, detail: { reason: "app disconnected", tokens: 2 } }]);
    expect(await events("consent.revoked", { userId: s.user.id })).toMatchObject([{ clientId: s.client.client_id }]);
  });

  it("rate_limited when the password grant's limit is reached, naming the user and client", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    keep(client.client_secret);
    const attempt = (password: string) =>
      call("POST", TOKEN, { body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password } });
    for (let i = 0; i < 10; i++) expect((await attempt(keep(`wrong password ${i}`))).status).toBe(400);
    const limited = await attempt(keep(user.password));
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: "rate_limited" });
    expect(await events("rate_limited", { userId: user.id })).toMatchObject([{ clientId: client.client_id, detail: { limit: "password grant" } }]);
  });

  it("client.created, client.secret_rotated and client.deleted, from the pages' functions and the CLI", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    keep(client.client_secret);
    keep(await rotateClientSecret({ ownerId: owner.id, clientId: client.client_id }));
    await deleteOwnClient({ ownerId: owner.id, clientId: client.client_id });
    expect((await events("client.created", { userId: owner.id })).map((event) => event.detail)).toEqual([{ grant_type: "password", public: false }]);
    expect(await events("client.secret_rotated", { clientId: client.client_id })).toMatchObject([{ userId: owner.id }]);
    expect(await events("client.deleted", { clientId: client.client_id })).toMatchObject([{ userId: owner.id }]);

    const cli = await runCli("client:create", "--owner", owner.email, "--name", "From the CLI", "--grant", "password", "--json");
    expect(cli.code).toBe(0);
    const made = JSON.parse(cli.stdout) as { client_id: string; client_secret: string };
    keep(made.client_secret);
    expect(await events("client.created", { clientId: made.client_id })).toMatchObject([{ userId: owner.id, detail: { grant_type: "password" } }]);
  });

  it("permission_request.redeemed and permission_request.declined, for the owner who decided", async () => {
    const owner = await makeUser({ name: "Owner" });
    const requester = await makeUser({ name: "Requester" });
    const ownerToken = keep((await call("POST", TOKEN, { body: await passwordBody(owner) })).json.access_token as string)!;
    const requesterToken = keep((await call("POST", TOKEN, { body: await passwordBody(requester) })).json.access_token as string)!;
    const bundle = await call("POST", "/api/bundle/", { token: ownerToken, body: { name: "Audit" } });
    expect(bundle.status).toBe(201);
    const ask = async () => {
      const made = await call("POST", "/api/bundle_permission_request/", {
        token: requesterToken,
        body: { bundle: bundle.json.id, user_allowed: requester.email, user_target: owner.email },
      });
      expect(made.status, made.text).toBe(201);
      const [mail] = await listMail({ to: owner.email });
      const token = keep(new URL(/https?:\/\/\S*[?&]token=[A-Za-z0-9_-]+/.exec(mail!.text)![0]).searchParams.get("token")!);
      return { id: made.json.id as number, token };
    };
    const first = await ask();
    const redeemed = await call("PUT", `/api/bundle_permission_request/${first.token}/`, { headers: { cookie: await sessionCookie(owner), origin: ISS } });
    expect(redeemed.status, redeemed.text).toBe(200);
    expect(await events("permission_request.redeemed", { userId: owner.id })).toMatchObject([{ detail: { request: first.id, bundle: bundle.json.id, user_allowed: requester.id } }]);
    // Access given: revoke it, then ask again and decline.
    const permissions = await call("GET", "/api/bundle_permission/", { token: ownerToken });
    for (const permission of (permissions.json as { objects: Array<{ id: number }> }).objects) {
      expect((await call("DELETE", `/api/bundle_permission/${permission.id}/`, { token: ownerToken })).status).toBe(204);
    }
    const second = await ask();
    expect((await call("DELETE", `/api/bundle_permission_request/${second.id}/`, { token: ownerToken })).status).toBe(204);
    expect(await events("permission_request.declined", { userId: owner.id })).toMatchObject([{ detail: { request: second.id, requested_by: requester.id } }]);
  });

  it("signing_key.rotated", async () => {
    const before = (await events("signing_key.rotated")).length;
    const rotated = await rotateSigningKey({ ip: "192.0.2.1" });
    const after = await events("signing_key.rotated");
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)).toMatchObject({ ip: "192.0.2.1", detail: { kid: rotated.kid } });
  });

  it("audit:list prints the events newest first as JSON, filtered by user and type", async () => {
    const session = await passwordSession();
    keep(session.accessToken);
    keep(session.refreshToken);
    keep(session.client.client_secret);
    const run = await runCli("audit:list", "--user", session.user.email, "--type", "token.issued", "--limit", "5", "--json");
    expect(run.code, run.stderr).toBe(0);
    const listed = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toEqual({
      type: "token.issued",
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      user: session.user.email,
      client: session.client.client_id,
      ip: "unknown", // in-process: no socket (over HTTP, the peer's address)
      detail: { grant_type: "password", scope: "readonly readwrite" },
    });
    const bad = await runCli("audit:list", "--type", "nonsense", "--json");
    expect(bad.code).toBe(2);
  });

  it("tokens:prune removes events after 90 days and keeps younger ones", async () => {
    const user = await makeUser();
    const client = await db();
    const now = nowMs();
    await client.auditEvent.create({ data: { type: "signin.succeeded", userId: user.id, at: new Date(now - 91 * 24 * 3600 * 1000) } });
    await client.auditEvent.create({ data: { type: "signin.succeeded", userId: user.id, at: new Date(now - 89 * 24 * 3600 * 1000) } });
    const counts = await pruneTokens();
    expect(counts.audit_events).toBeGreaterThanOrEqual(1);
    const left = await events("signin.succeeded", { userId: user.id });
    expect(left.map((event) => Math.round((now - event.at.getTime()) / (24 * 3600 * 1000)))).toEqual([89]);
  });

  it("never stores a token, code, secret or password in any event", async () => {
    expect(secrets.size).toBeGreaterThan(30);
    const rows = await (await db()).auditEvent.findMany();
    const stored = rows.map((row) => JSON.stringify(row)).join("\n");
    for (const secret of secrets) expect(stored.includes(secret), `an event holds ${secret.slice(0, 6)}…`).toBe(false);
  });
});

async function passwordBody(user: { id: number; email: string; password: string }) {
  const client = await makeClient({ ownerId: user.id, firstParty: true });
  keep(client.client_secret);
  keep(user.password);
  return { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password, scope: "readonly readwrite" };
}
