// Issuing in one commit (docs/design.md#the-data-layer, docs/rules/tokens.md#authorization-codes,
// docs/rules/tokens.md#device-flow, docs/rules/tokens.md#client-credentials,
// docs/rules/operations.md#audit-log, docs/rules/accounts.md#unconfirmed-accounts): the code exchange, the
// device-code claim and client_credentials write their claim, grant, tokens and token.issued event together,
// so that when the event cannot be written nothing is (the code is not spent, no token or grant is left);
// exchanges fired together each get their own outcome (one refused does not refuse another in the same
// commit); of N concurrent exchanges of one code exactly one issues, with exactly one token.issued event; an
// account whose address is not confirmed gets nothing and spends nothing.
import { describe, expect, it } from "vitest";
import { db, write } from "@/db/client";
import { exchangeCode } from "@/db/fast-sql";
import { auditRow } from "@/audit/record-event";
import { mintTokens } from "@/oauth/tokens";
import { digest } from "@/secrets";
import { now } from "@/clock";
import { call } from "@/testing/app";
import { approvedCode, approvedDeviceCode, makeClient, makeUser } from "@/testing/factories";
import { refuseInserts } from "@/testing/faults";

const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test/callback";

async function codeScene() {
  const { user, client, code } = await approvedCode(REDIRECT);
  const exchange = () => call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret } });
  return { user, client, code, exchange };
}

/** What the user's grants hold: tokens, and the events recorded for them. */
async function written(userId: number) {
  const client = await db();
  return {
    accessTokens: await client.accessToken.count({ where: { userId } }),
    refreshTokens: await client.refreshToken.count({ where: { userId } }),
    issued: await client.auditEvent.count({ where: { userId, type: "token.issued" } }),
  };
}

/** Runs `request` while the database refuses the user's audit events: a server_error. */
async function withoutAudit(userId: number, request: () => ReturnType<typeof call>) {
  const undo = await refuseInserts("AuditEvent", "userId", userId);
  try {
    const res = await request();
    expect({ status: res.status, body: res.json }).toEqual({ status: 500, body: { error: "server_error" } });
  } finally {
    await undo();
  }
}

const setConfirmed = (userId: number, confirmed: boolean) =>
  write((tx) => tx.user.update({ where: { id: userId }, data: { emailVerifiedAt: confirmed ? now() : null } }));

describe("the token.issued event is written in the commit that issues", () => {
  it("code exchange: when the event cannot be written, no token is, and the code is not spent", async () => {
    const s = await codeScene();
    await withoutAudit(s.user.id, s.exchange);
    expect(await written(s.user.id)).toEqual({ accessTokens: 0, refreshTokens: 0, issued: 0 });
    const row = await (await db()).authorizationCode.findUniqueOrThrow({ where: { digest: digest(s.code) } });
    expect(row.usedAt).toBeNull();
    expect((await s.exchange()).status).toBe(200);
    expect(await written(s.user.id)).toEqual({ accessTokens: 1, refreshTokens: 1, issued: 1 });
  });

  it("client_credentials: when the event cannot be written, neither the grant nor the token is", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "client_credentials", redirectUris: [] });
    const ask = () => call("POST", TOKEN, { body: { grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret } });
    await withoutAudit(owner.id, ask);
    expect(await (await db()).grant.count({ where: { userId: owner.id } })).toBe(0);
    expect(await written(owner.id)).toEqual({ accessTokens: 0, refreshTokens: 0, issued: 0 });
    expect((await ask()).status).toBe(200);
    expect(await written(owner.id)).toEqual({ accessTokens: 1, refreshTokens: 0, issued: 1 });
  });

  it("device code: when the event cannot be written, nothing is, and the approved device code is not spent", async () => {
    const { user, poll } = await approvedDeviceCode();
    await withoutAudit(user.id, poll);
    expect(await (await db()).grant.count({ where: { userId: user.id } })).toBe(0);
    expect(await written(user.id)).toEqual({ accessTokens: 0, refreshTokens: 0, issued: 0 });
    expect((await poll()).status).toBe(200);
    expect(await written(user.id)).toEqual({ accessTokens: 1, refreshTokens: 1, issued: 1 });
  });
});

describe("the device-code claim and an unconfirmed address", () => {
  it("issues nothing while the approving user's address is not confirmed, and leaves the device code unspent", async () => {
    const { user, poll, device_code } = await approvedDeviceCode();
    await setConfirmed(user.id, false);
    const refused = await poll();
    expect({ status: refused.status, body: refused.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    expect(await (await db()).grant.count({ where: { userId: user.id } })).toBe(0);
    expect(await written(user.id)).toEqual({ accessTokens: 0, refreshTokens: 0, issued: 0 });
    expect((await (await db()).deviceAuthorization.findUniqueOrThrow({ where: { deviceCodeDigest: digest(device_code) } })).usedAt).toBeNull();
    await setConfirmed(user.id, true);
    expect((await poll()).status).toBe(200);
    expect(await written(user.id)).toEqual({ accessTokens: 1, refreshTokens: 1, issued: 1 });
  });
});

describe("exchanges fired together", () => {
  it("each gets its own outcome: one whose event is refused fails alone, the others issue", async () => {
    const scenes = await Promise.all([codeScene(), codeScene(), codeScene()]);
    const refused = scenes[1]!;
    const undo = await refuseInserts("AuditEvent", "userId", refused.user.id);
    let results;
    try {
      results = await Promise.all(scenes.map((s) => s.exchange()));
    } finally {
      await undo();
    }
    expect(results.map((res) => res.status)).toEqual([200, 500, 200]);
    expect(await written(scenes[0]!.user.id)).toEqual({ accessTokens: 1, refreshTokens: 1, issued: 1 });
    expect(await written(refused.user.id)).toEqual({ accessTokens: 0, refreshTokens: 0, issued: 0 });
    expect(await written(scenes[2]!.user.id)).toEqual({ accessTokens: 1, refreshTokens: 1, issued: 1 });
  });
});

describe("exchangeCode (src/db/fast-sql.ts)", () => {
  /** The exchange of a scene's code as the grant makes it, with fresh token values each time. */
  async function exchangeOf(s: Awaited<ReturnType<typeof codeScene>>, withEvent = true) {
    const row = await (await db()).authorizationCode.findUniqueOrThrow({ where: { digest: digest(s.code) } });
    const clientRow = await (await db()).client.findUniqueOrThrow({ where: { clientId: s.client.client_id } });
    return () => {
      const at = now();
      const minted = mintTokens({ grantId: row.grantId, clientId: row.clientId, userId: row.userId, scopes: ["readonly"], refreshScopes: ["readonly"] }, at);
      return exchangeCode({
        codeId: row.id,
        grantId: row.grantId,
        userId: row.userId,
        at,
        access: minted.access,
        refresh: minted.refresh!,
        audit: withEvent ? auditRow({ type: "token.issued", userId: row.userId, clientId: clientRow.clientId, detail: { grant_type: "authorization_code", scope: "readonly" } }) : null,
      });
    };
  }

  it("of eight concurrent exchanges of one code exactly one issues, with one token.issued event; the others write nothing", async () => {
    const s = await codeScene();
    const exchange = await exchangeOf(s);
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => exchange()));
    expect(outcomes.filter((outcome) => outcome === "issued")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === "lost")).toHaveLength(7);
    expect(await written(s.user.id)).toEqual({ accessTokens: 1, refreshTokens: 1, issued: 1 });
  });

  it("with no event to record, issues the tokens and records none", async () => {
    const s = await codeScene();
    expect(await (await exchangeOf(s, false))()).toBe("issued");
    expect(await written(s.user.id)).toEqual({ accessTokens: 1, refreshTokens: 1, issued: 0 });
  });

  it("issues nothing to an account whose address is not confirmed, and leaves the code unspent", async () => {
    const s = await codeScene();
    const exchange = await exchangeOf(s);
    await setConfirmed(s.user.id, false);
    expect(await exchange()).toBe("unconfirmed");
    expect(await written(s.user.id)).toEqual({ accessTokens: 0, refreshTokens: 0, issued: 0 });
    const res = await s.exchange();
    expect({ status: res.status, body: res.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    await setConfirmed(s.user.id, true);
    expect((await s.exchange()).status).toBe(200);
  });

  it("claims nothing once the code's grant is revoked", async () => {
    const s = await codeScene();
    const exchange = await exchangeOf(s);
    const row = await (await db()).authorizationCode.findUniqueOrThrow({ where: { digest: digest(s.code) } });
    await write((tx) => tx.grant.update({ where: { id: row.grantId }, data: { revokedAt: now() } }));
    expect(await exchange()).toBe("lost");
    expect(await written(s.user.id)).toEqual({ accessTokens: 0, refreshTokens: 0, issued: 0 });
    expect((await (await db()).authorizationCode.findUniqueOrThrow({ where: { id: row.id } })).usedAt).toBeNull();
  });
});
