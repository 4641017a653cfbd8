// The refresh_token grant (src/token-endpoint/grants/refresh-token.ts) as a client, a user and an operator see it: RFC 6749
// 6 with the rotation and reuse detection of RFC 9700 4.14.2 (docs/rules/tokens.md#refresh), and its audit
// events (docs/rules/operations.md#audit-log: `token.refreshed`, `token.reuse_detected`, which
// /settings/security shows the user as "someone may have copied its token"). Every test runs on both
// databases. They differ in one place, asserted as such: on PostgreSQL a refresh that narrows no scope is one
// statement, and a rotation reads the token before its claim, so two refreshes can both read an unused token
// and one of them loses at the claim (a concurrent reuse); on SQLite every rotation reads the token inside its
// own transaction, so the later one sees a used token.
import { afterEach, describe, expect, it, vi } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { env } from "@/env";
import { digest } from "@/secrets";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";
import { holdClaims } from "@/testing/race";

const TOKEN = "/api/connect/oauth2/token/";
const DAY = 24 * 3600 * 1000;
const postgres = () => env().database.kind === "postgresql";

type Session = Awaited<ReturnType<typeof passwordSession>>;

afterEach(() => {
  vi.useRealTimers();
  resetClock();
});

/** A refresh by the session's client, from `address` (the last X-Forwarded-For entry is the peer here). */
function refresh(session: Session, refreshToken: string, extra: Record<string, string> = {}, address = "203.0.113.1") {
  return call("POST", TOKEN, {
    headers: { "x-forwarded-for": address },
    body: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret, ...extra },
  });
}

/** The user's stored events of one type, oldest first, as audit:list shows them. */
async function events(type: string, userId: number) {
  const rows = await (await db()).auditEvent.findMany({ where: { type, userId }, orderBy: { id: "asc" } });
  return rows.map((row) => ({ clientId: row.clientId, ip: row.ip, detail: row.detail ? (JSON.parse(row.detail) as Record<string, unknown>) : null }));
}

const userStatus = async (session: Session, token: unknown) => (await call("GET", `/api/user/${session.user.id}/`, { token: String(token) })).status;

describe("token.refreshed", () => {
  it("records every refresh with its client, the caller's address and the new access token's scope, narrowed or not", async () => {
    const session = await passwordSession("readonly readwrite");
    const whole = await refresh(session, session.refreshToken, {}, "198.51.100.7");
    expect({ status: whole.status, scopes: whole.json.scopes }).toEqual({ status: 200, scopes: ["readonly", "readwrite"] });
    const narrowed = await refresh(session, String(whole.json.refresh_token), { scope: "readonly" }, "198.51.100.8");
    expect({ status: narrowed.status, scopes: narrowed.json.scopes }).toEqual({ status: 200, scopes: ["readonly"] });
    expect(await events("token.refreshed", session.user.id)).toEqual([
      { clientId: session.client.client_id, ip: "198.51.100.7", detail: { scope: "readonly readwrite" } },
      { clientId: session.client.client_id, ip: "198.51.100.8", detail: { scope: "readonly" } },
    ]);
  });
});

describe("reuse detection", () => {
  it("a used refresh token presented again is invalid_grant, ends the grant, and is recorded once as a plain reuse", async () => {
    const session = await passwordSession();
    const first = await refresh(session, session.refreshToken);
    expect(first.status).toBe(200);
    const replay = await refresh(session, session.refreshToken);
    expect({ status: replay.status, body: replay.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    expect(await userStatus(session, first.json.access_token)).toBe(401);
    // Presented after the winner had finished: not a race, so nothing marks it concurrent.
    expect(await events("token.reuse_detected", session.user.id)).toEqual([
      { clientId: session.client.client_id, ip: "203.0.113.1", detail: { grant_type: "password" } },
    ]);
  });

  it("a refresh token of a revoked grant is invalid_grant and is not recorded as a reuse (the user is not told it was copied)", async () => {
    const session = await passwordSession();
    const revoked = await call("POST", "/api/connect/oauth2/revoke/", {
      body: { token: session.refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret },
    });
    expect(revoked.status).toBe(200);
    const late = await refresh(session, session.refreshToken);
    expect({ status: late.status, body: late.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    expect(await events("token.reuse_detected", session.user.id)).toEqual([]);
    expect(await events("token.revoked", session.user.id)).toHaveLength(1);
  });
});

describe("expiry", () => {
  it("a refresh token works until the last millisecond of its 30 days and is refused from the first one after", async () => {
    // A clock that stands still unless moved, so that a request lands on an exact millisecond.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-03-02T10:00:00.000Z"));
    const early = await passwordSession();
    const onTime = await passwordSession();
    advanceClock(30 * DAY - 1);
    const last = await refresh(early, early.refreshToken);
    expect({ status: last.status, scopes: last.json.scopes }).toEqual({ status: 200, scopes: ["readonly", "readwrite"] });
    advanceClock(1);
    const expired = await refresh(onTime, onTime.refreshToken);
    expect({ status: expired.status, body: expired.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    // Refused as expired, not as a reuse: nothing was consumed, nothing recorded.
    expect(await events("token.reuse_detected", onTime.user.id)).toEqual([]);
    expect(await events("token.refreshed", onTime.user.id)).toEqual([]);
  });
});

describe("two refreshes of one token, the second reading it before the first claims it", () => {
  /** Fires two refreshes of the session's token while the test holds every claim on it, then lets them go. */
  async function raced(session: Session, extra: Record<string, string>) {
    const row = await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(session.refreshToken) } });
    const hold = await holdClaims("RefreshToken", row.id);
    const fired = [refresh(session, session.refreshToken, extra), refresh(session, session.refreshToken, extra)];
    // PostgreSQL: both have read the unused token and wait at their claims. SQLite: the rotations wait for
    // their transaction, in which they will read the token (one or two batches: src/db/fast-sql.ts).
    await hold.waitForClaims(postgres() ? 2 : 1);
    await hold.release();
    const results = await Promise.all(fired);
    const winner = results.find((res) => res.status === 200);
    const loser = results.find((res) => res.status !== 200);
    expect(winner).toBeDefined();
    expect({ status: loser?.status, body: loser?.json }).toEqual({ status: 400, body: { error: "invalid_grant" } });
    // No grace period: the loser's reuse ends the grant, the winner's new tokens too.
    expect(await userStatus(session, winner!.json.access_token)).toBe(401);
    expect((await refresh(session, String(winner!.json.refresh_token))).json).toEqual({ error: "invalid_grant" });
    return winner!;
  }

  it("narrowing: one succeeds, the other ends the grant; PostgreSQL records a reuse that lost the race, SQLite a plain one", async () => {
    const session = await passwordSession();
    const winner = await raced(session, { scope: "readonly" });
    expect(winner.json.scopes).toEqual(["readonly"]);
    // One reuse: the loser's (the winner's refresh token, used after the grant ended, is merely revoked).
    expect(await events("token.reuse_detected", session.user.id)).toEqual([
      {
        clientId: session.client.client_id,
        ip: "203.0.113.1",
        detail: postgres() ? { grant_type: "password", concurrent: true } : { grant_type: "password" },
      },
    ]);
  });

  it("not narrowing (PostgreSQL's one-statement rotation): one succeeds with the token's scopes, the other ends the grant", async () => {
    const session = await passwordSession();
    const winner = await raced(session, {});
    expect(winner.json.scopes).toEqual(["readonly", "readwrite"]);
    expect(await events("token.refreshed", session.user.id)).toEqual([
      { clientId: session.client.client_id, ip: "203.0.113.1", detail: { scope: "readonly readwrite" } },
    ]);
    expect(await events("token.reuse_detected", session.user.id)).toHaveLength(1);
  });
});
