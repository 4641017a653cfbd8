// What a push stores and refuses (RFC 9126 2.1-2.3, docs/rules/tokens.md#pushed-authorization-requests,
// docs/rules/accounts.md#limits): the row a push leaves, the requests it refuses without storing anything, and
// the per-client cap on unexpired pushed requests at its exact boundary.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { db, write } from "@/db/client";
import { s256 } from "@/oauth/pkce";
import { MAX_LIVE_PUSHED_REQUESTS, PUSHED_REQUEST_TTL_SECONDS } from "@/par/pushed-requests";
import { digest } from "@/secrets";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";

const PAR = "/api/connect/oauth2/par/";
const REDIRECT = "https://client.example.test/callback";
const PREFIX = "urn:ietf:params:oauth:request_uri:";

afterEach(() => resetClock());

async function setup() {
  const owner = await makeUser();
  const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", firstParty: true });
  const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
  const body = (extra: Record<string, unknown> = {}) => ({
    response_type: "code",
    client_id: client.client_id,
    client_secret: client.client_secret,
    redirect_uri: REDIRECT,
    scope: "readonly",
    state: "st",
    code_challenge: s256("v".repeat(64)),
    code_challenge_method: "S256",
    ...extra,
  });
  const stored = async () => (await db()).pushedAuthorizationRequest.findMany({ where: { clientId: row.id }, orderBy: { id: "asc" } });
  return { owner, client, row, body, stored, push: (extra: Record<string, unknown> = {}) => call("POST", PAR, { body: body(extra) }) };
}

describe("a pushed request", () => {
  it("is stored under the digest of its request_uri, with the authorization parameters in order, for 60 s", async () => {
    const s = await setup();
    const res = await s.push({ nonce: "n-1", prompt: "consent", max_age: "300" });
    expect(res.status).toBe(201);
    expect(res.json.expires_in).toBe(PUSHED_REQUEST_TTL_SECONDS);
    const handle = (res.json.request_uri as string).slice(PREFIX.length);
    const [row] = await s.stored();
    expect(row!.digest).toBe(digest(handle));
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(60_000);
    expect(Math.abs(row!.createdAt.getTime() - nowMs())).toBeLessThan(60_000);
    expect(JSON.parse(row!.params)).toEqual([
      ["response_type", "code"],
      ["redirect_uri", REDIRECT],
      ["scope", "readonly"],
      ["state", "st"],
      ["code_challenge", s256("v".repeat(64))],
      ["code_challenge_method", "S256"],
      ["nonce", "n-1"],
      ["prompt", "consent"],
      ["max_age", "300"],
    ]);
  });

  it("is refused, storing nothing, when it carries a request object, a non-string value or no redirect_uri", async () => {
    const s = await setup();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ request: "eyJhbGciOiJub25lIn0.e30." }, "request_not_supported"],
      [{ scope: ["readonly"] }, "invalid_request"],
      [{ state: 7 }, "invalid_request"],
      [{ unknown_extension: { a: 1 } }, "invalid_request"],
      [{ redirect_uri: undefined }, "invalid_request"],
      [{ request_uri: `${PREFIX}pushed-before` }, "invalid_request"],
      [{ state: "" }, "invalid_request"],
      [{ state: undefined }, "invalid_request"],
    ];
    for (const [extra, error] of cases) {
      const res = await s.push(extra);
      expect({ extra, status: res.status, body: res.json }).toEqual({ extra, status: 400, body: { error } });
    }
    // A parameter sent twice (RFC 9126 2.1, RFC 6749 3.1).
    const form = `${new URLSearchParams(s.body() as Record<string, string>)}&scope=readonly`;
    const twice = await call("POST", PAR, { raw: form, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect({ status: twice.status, body: twice.json }).toEqual({ status: 400, body: { error: "invalid_request" } });
    expect(await s.stored()).toEqual([]);
  });
});

describe("the cap on a client's unexpired pushed requests", () => {
  const fill = (clientId: number, count: number, expiresAt: Date) =>
    write((tx) =>
      tx.pushedAuthorizationRequest.createMany({
        data: Array.from({ length: count }, (_, i) => ({ digest: digest(`fill-${clientId}-${i}-${expiresAt.getTime()}`), clientId, params: "[]", expiresAt })),
      }),
    );

  it("takes the 100th and refuses the 101st with 429 and Retry-After until the first expires, recording rate_limited", async () => {
    const s = await setup();
    // The first to expire was stored last: Retry-After follows expiry, not the order of storing.
    await fill(s.row.id, MAX_LIVE_PUSHED_REQUESTS - 2, new Date(nowMs() + 50_000));
    await fill(s.row.id, 1, new Date(nowMs() + 30_000));
    expect((await s.push()).status).toBe(201);
    const refused = await s.push();
    expect({ status: refused.status, body: refused.json }).toEqual({ status: 429, body: { error: "rate_limited" } });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(29);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(30);
    expect(await s.stored()).toHaveLength(MAX_LIVE_PUSHED_REQUESTS);
    const events = await (await db()).auditEvent.findMany({ where: { type: "rate_limited", clientId: s.client.client_id } });
    expect(events.map((event) => JSON.parse(event.detail!))).toEqual([{ limit: "pushed requests" }]);
    advanceClock(30_001);
    expect((await s.push()).status).toBe(201);
    expect((await s.push()).status).toBe(429);
  });

  it("does not count expired requests, nor another client's", async () => {
    const s = await setup();
    const other = await setup();
    await fill(s.row.id, MAX_LIVE_PUSHED_REQUESTS, new Date(nowMs() - 1000));
    await fill(other.row.id, MAX_LIVE_PUSHED_REQUESTS, new Date(nowMs() + 30_000));
    expect((await s.push()).status).toBe(201);
    expect(await (await db()).auditEvent.count({ where: { type: "rate_limited", clientId: s.client.client_id } })).toBe(0);
  });
});
