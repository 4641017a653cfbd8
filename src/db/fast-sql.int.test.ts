// The hot token statements (src/db/fast-sql.ts) on the suite's database (SQLite, and PostgreSQL in CI):
// what each reads, that they agree with what Prisma stored, and that the rotation keeps single use when it
// meets Prisma's own transactions and concurrent revocations.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, now, resetClock } from "@/clock";
import { OAuthError } from "@/oauth/errors";
import Database from "better-sqlite3";
import fc from "fast-check";
import { bearerToken, clientByClientId, groupedWritesWaiting, startGrant as startGrantRow, LostRotation, releaseSlots, reserveSlots, rotateAtOnce, rotateRefreshToken, sqliteTime, tokenByValue, userByEmail, type RotationPlan } from "@/db/fast-sql";
import { mintTokens, startGrant } from "@/oauth/tokens";
import { digest } from "@/secrets";
import { env, setEnvForTests } from "@/env";
import { db, driver, write } from "@/db/client";
import { call } from "@/testing/app";
import { tokenCacheHits } from "@/observability/metrics";
import { makeClient, makeUser } from "@/testing/factories";

afterEach(() => resetClock());

async function grantWithTokens(options: { firstParty?: boolean; scopes?: ("readonly" | "readwrite")[] } = {}) {
  const user = await makeUser({ name: "Store User" });
  const client = await makeClient({ ownerId: user.id, firstParty: options.firstParty ?? false });
  const clientRow = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
  const record = await startGrant({ clientId: clientRow.id, publicClientId: clientRow.clientId, userId: user.id, grantType: "password", scopes: options.scopes ?? ["readonly", "readwrite"], withRefreshToken: true });
  const row = await (await db()).accessToken.findUniqueOrThrow({ where: { digest: digest(record.access_token) } });
  return { user, client, clientRow, record, grantId: row.grantId };
}

describe("sqliteTime", () => {
  it("writes any time as Prisma's SQLite adapter stores it (ISO 8601 with +00:00), from one second's text or not", () => {
    const written = (date: Date) => date.toISOString().replace("Z", "+00:00");
    const around = (ms: number) => fc.integer({ min: ms - 5_000, max: ms + 5_000 });
    const ms = fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), around(0), around(253_402_300_800_000), around(Date.now()));
    fc.assert(fc.property(fc.array(ms, { minLength: 1, maxLength: 4 }), (times) => times.forEach((t) => expect(sqliteTime(new Date(t))).toBe(written(new Date(t))))), { numRuns: 3000 });
    expect(() => sqliteTime(new Date(NaN))).toThrow(RangeError);
    // The first instant of the year 10000 and the epoch itself, exactly.
    for (const t of [253_402_300_800_000, 253_402_300_799_999, 0, -1]) expect(sqliteTime(new Date(t))).toBe(written(new Date(t)));
  });
});

describe("bearerToken", () => {
  it("reads the token with its user and its client's first-party flag", async () => {
    const third = await grantWithTokens();
    expect(await bearerToken(digest(third.record.access_token), now())).toEqual({
      userId: third.user.id,
      clientId: third.clientRow.id,
      scopes: "readonly readwrite",
      userName: "Store User",
      userEmail: third.user.email,
      firstParty: false,
      jkt: null,
      audience: "/api",
    });
    const first = await grantWithTokens({ firstParty: true, scopes: ["readonly"] });
    expect(await bearerToken(digest(first.record.access_token), now())).toMatchObject({ userId: first.user.id, scopes: "readonly", firstParty: true });
  });

  it("refuses an unknown token, an expired one, a revoked one, and one whose grant alone was revoked", async () => {
    expect(await bearerToken(digest("no-such-token"), now())).toBeNull();

    const expiring = await grantWithTokens();
    const live = await bearerToken(digest(expiring.record.access_token), now());
    expect(live?.userId).toBe(expiring.user.id);
    advanceClock(3600 * 1000);
    expect(await bearerToken(digest(expiring.record.access_token), now())).toBeNull();
    resetClock();

    const revoked = await grantWithTokens();
    await write((tx) => tx.accessToken.updateMany({ where: { digest: digest(revoked.record.access_token) }, data: { revokedAt: now() } }));
    expect(await bearerToken(digest(revoked.record.access_token), now())).toBeNull();

    // Revocation writes the grant row first (src/oauth/tokens.ts): the grant alone is enough to refuse.
    const grantOnly = await grantWithTokens();
    await write((tx) => tx.grant.update({ where: { id: grantOnly.grantId }, data: { revokedAt: now() } }));
    expect(await bearerToken(digest(grantOnly.record.access_token), now())).toBeNull();
  });

  it("answers a token up to the millisecond before its expires_at and never at it, from the cache or not", async () => {
    const { record, user } = await grantWithTokens();
    const key = digest(record.access_token);
    const expiresAt = (await (await db()).accessToken.findUniqueOrThrow({ where: { digest: key } })).expiresAt.getTime();
    expect(await bearerToken(key, expiresAt - 1)).toMatchObject({ userId: user.id }); // (kept in the cache on SQLite)
    await new Promise((resolve) => setImmediate(resolve));
    expect(await bearerToken(key, expiresAt - 1)).toMatchObject({ userId: user.id });
    expect(await bearerToken(key, expiresAt)).toBeNull();
    expect(await bearerToken(key, new Date(expiresAt))).toBeNull();
  });

  it("answers many lookups asked for at once each on its own terms (one statement for all on PostgreSQL)", async () => {
    const [a, b, revoked] = [await grantWithTokens(), await grantWithTokens(), await grantWithTokens()];
    await write((tx) => tx.accessToken.updateMany({ where: { digest: digest(revoked.record.access_token) }, data: { revokedAt: now() } }));
    const at = now();
    const later = new Date(at.getTime() + 3600 * 1000); // the same token, looked up as if past its expiry
    const rows = await Promise.all([
      bearerToken(digest(a.record.access_token), at),
      bearerToken(digest(b.record.access_token), at),
      bearerToken(digest(a.record.access_token), later),
      bearerToken(digest(revoked.record.access_token), at),
      bearerToken(digest("unknown"), at),
      bearerToken(digest(b.record.access_token), at),
    ]);
    expect(rows.map((row) => row?.userId ?? null)).toEqual([a.user.id, b.user.id, null, null, null, b.user.id]);
    expect(rows[0]).toEqual({ userId: a.user.id, clientId: a.clientRow.id, scopes: "readonly readwrite", userName: "Store User", userEmail: a.user.email, firstParty: false, jkt: null, audience: "/api" });
  });

  it("sees a revocation committed after its previous lookup, also when lookups are made together", async () => {
    const { record, grantId, user } = await grantWithTokens();
    const key = digest(record.access_token);
    expect((await Promise.all([bearerToken(key, now()), bearerToken(key, now())])).map((row) => row?.userId)).toEqual([user.id, user.id]);
    await write((tx) => tx.grant.update({ where: { id: grantId }, data: { revokedAt: now() } }));
    expect(await Promise.all([bearerToken(key, now()), bearerToken(key, now())])).toEqual([null, null]);
  });

  it("on SQLite, lookups made in one synchronous run share one read transaction of the reader connection, ended before any goes on", async () => {
    const d = await driver();
    if (d.kind !== "sqlite") return; // PostgreSQL batches them into one statement (above)
    const { record, user } = await grantWithTokens();
    const other = await grantWithTokens(); // (two tokens: a second lookup of one token is answered from the cache)
    const reader = d.reader();
    expect(reader).not.toBe(d.connection);
    expect(reader.inTransaction).toBe(false);
    const first = bearerToken(digest(record.access_token), now());
    expect(reader.inTransaction).toBe(true);
    const second = bearerToken(digest(other.record.access_token), now());
    expect(reader.inTransaction).toBe(true);
    const third = bearerToken(digest("unknown"), now());
    expect(first).not.toBeInstanceOf(Promise); // the answer itself: no promise on the bearer path
    // What the first caller sees when it goes on (`await`): the run's read transaction is over by then.
    const seenByFirst = (async () => ({ row: await first, open: reader.inTransaction }))();
    expect(await seenByFirst).toMatchObject({ row: { userId: user.id }, open: false });
    expect(await second).toMatchObject({ userId: other.user.id });
    expect(await third).toBeNull();
    // The next run starts afresh.
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { name: "Renamed" } })); // (empties the cache)
    const alone = bearerToken(digest(record.access_token), now());
    expect(reader.inTransaction).toBe(true);
    expect(await alone).toMatchObject({ userId: user.id });
    expect(reader.inTransaction).toBe(false);
    expect(() => reader.prepare(`DELETE FROM "AccessToken"`).run()).toThrow(/readonly/i);
  });

  it("on SQLite, answers a live token it has read from its cache until anything is committed by any connection, and never past its expiry", async () => {
    const database = env().database;
    if (database.kind !== "sqlite") return; // PostgreSQL has no cache (fast-sql.ts): every lookup is a statement
    const { record, user, grantId } = await grantWithTokens();
    const key = digest(record.access_token);
    const nextRun = () => new Promise((resolve) => setImmediate(resolve));
    const first = await bearerToken(key, now());
    await nextRun();
    // The very same object: answered from the cache, in a later run, without a statement, and counted.
    const hits = tokenCacheHits.count;
    expect(await bearerToken(key, now())).toBe(first);
    expect(tokenCacheHits.count).toBe(hits + 1);
    expect(Object.isFrozen(first)).toBe(true);

    // A commit by another connection to the file (as another worker or process makes), of anything at all,
    // empties the cache: the next lookup reads afresh.
    const elsewhere = new Database(database.file);
    try {
      elsewhere.prepare(`UPDATE "User" SET "name" = 'Renamed Elsewhere' WHERE "id" = ?`).run(user.id);
      await nextRun();
      const fresh = await bearerToken(key, now());
      expect(fresh).not.toBe(first);
      expect(fresh).toMatchObject({ userId: user.id, userName: "Renamed Elsewhere" });
      await nextRun();
      expect(await bearerToken(key, now())).toBe(fresh);
      // Revoked elsewhere: refused on the next lookup.
      elsewhere.prepare(`UPDATE "Grant" SET "revokedAt" = ? WHERE "id" = ?`).run(sqliteTime(now()), grantId);
      await nextRun();
      expect(await bearerToken(key, now())).toBeNull();
    } finally {
      elsewhere.close();
    }

    // Through Prisma's own connection in this process, likewise.
    const mine = await grantWithTokens();
    const mineKey = digest(mine.record.access_token);
    const cached = await bearerToken(mineKey, now());
    await nextRun();
    expect(await bearerToken(mineKey, now())).toBe(cached);
    await write((tx) => tx.accessToken.updateMany({ where: { digest: mineKey }, data: { revokedAt: now() } }));
    await nextRun();
    expect(await bearerToken(mineKey, now())).toBeNull();

    // Expiry needs no commit: a cached token is refused once the clock passes its expires_at.
    const expiring = await grantWithTokens();
    const expiringKey = digest(expiring.record.access_token);
    const live = await bearerToken(expiringKey, now());
    await nextRun();
    expect(await bearerToken(expiringKey, now())).toBe(live);
    advanceClock(3600 * 1000);
    expect(await bearerToken(expiringKey, now())).toBeNull();
  });

  it("on SQLite, keeps at most TOKEN_CACHE_SIZE tokens, dropping the oldest, and none with 0", async () => {
    if (env().database.kind !== "sqlite") return;
    const nextRun = () => new Promise((resolve) => setImmediate(resolve));
    const [a, b, c] = [await grantWithTokens(), await grantWithTokens(), await grantWithTokens()].map((g) => digest(g.record.access_token)) as [string, string, string];
    const previous = setEnvForTests({ tokenCacheSize: 2 });
    try {
      const first = { a: await bearerToken(a, now()), b: await bearerToken(b, now()) };
      await nextRun();
      expect(await bearerToken(a, now())).toBe(first.a);
      expect(await bearerToken(b, now())).toBe(first.b);
      await bearerToken(c, now()); // a third: the oldest (a) goes
      await nextRun();
      expect(await bearerToken(b, now())).toBe(first.b);
      const again = await bearerToken(a, now());
      expect(again).toEqual(first.a);
      expect(again).not.toBe(first.a);

      setEnvForTests({ tokenCacheSize: 0 });
      await write((tx) => tx.user.create({ data: { email: `cache-${now().getTime()}@example.test`, name: "x", passwordHash: "x" } })); // (empties the cache)
      await nextRun();
      const uncached = await bearerToken(c, now());
      await nextRun();
      const reread = await bearerToken(c, now());
      expect(reread).toEqual(uncached);
      expect(reread).not.toBe(uncached);
    } finally {
      setEnvForTests(previous);
    }
  });

  it("does not read a Prisma transaction's uncommitted token, nor wait for the transaction", async () => {
    const { grantId, clientRow, user } = await grantWithTokens();
    const minted = mintTokens({ grantId, clientId: clientRow.id, userId: user.id, scopes: ["readonly"] });
    let readDuringTransaction: unknown = "not read";
    // The read is awaited inside the open transaction: were it to wait for that transaction, the two would
    // wait on each other until the transaction's own time limit ended it with another error than ours.
    await expect(
      write(async (tx) => {
        await tx.accessToken.create({ data: minted.access });
        readDuringTransaction = await bearerToken(minted.access.digest, now());
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    // The read ran while the token existed only inside the open transaction, and never saw it.
    expect(readDuringTransaction).toBeNull();
  });
});

describe("tokenByValue", () => {
  it("finds access and refresh tokens with the times Prisma stored, whatever the hint", async () => {
    const { record, clientRow, user, grantId } = await grantWithTokens();
    const stored = await (await db()).accessToken.findUniqueOrThrow({ where: { digest: digest(record.access_token) } });
    for (const hint of [undefined, "access_token", "refresh_token", "nonsense"]) {
      expect(await tokenByValue(digest(record.access_token), hint)).toEqual({
        kind: "access_token",
        id: stored.id,
        grantId,
        clientId: clientRow.id,
        scopes: "readonly readwrite",
        createdAt: stored.createdAt,
        expiresAt: stored.expiresAt,
        revokedAt: null,
        usedAt: null,
        jkt: null,
        audience: "/api",
        user: { id: user.id, email: user.email },
      });
    }
    const refresh = await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(record.refresh_token!) } });
    expect(await tokenByValue(digest(record.refresh_token!), "access_token")).toMatchObject({
      kind: "refresh_token",
      id: refresh.id,
      createdAt: refresh.createdAt,
      expiresAt: refresh.expiresAt,
      usedAt: null,
    });
    expect(await tokenByValue(digest("unknown"), undefined)).toBeNull();
  });
});

describe("startGrant", () => {
  it("stores the grant, its tokens (under the new grant's id) and the token.issued event together", async () => {
    const { user, clientRow, record, grantId } = await grantWithTokens({ scopes: ["readonly"] });
    const grant = await (await db()).grant.findUniqueOrThrow({ where: { id: grantId } });
    expect(grant).toMatchObject({ clientId: clientRow.id, userId: user.id, grantType: "password", scopes: "readonly", revokedAt: null });
    const refresh = await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(record.refresh_token!) } });
    expect(refresh).toMatchObject({ grantId, clientId: clientRow.id, userId: user.id, scopes: "readonly", usedAt: null });
    expect(refresh.expiresAt.getTime() - refresh.createdAt.getTime()).toBe(30 * 24 * 3600 * 1000);
    const events = await (await db()).auditEvent.findMany({ where: { type: "token.issued", userId: user.id } });
    expect(events.map((event) => [event.clientId, JSON.parse(event.detail!)])).toEqual([[clientRow.clientId, { grant_type: "password", scope: "readonly" }]]);
  });

  it("as one statement: with no refresh token and no event, only the grant and its access token; nothing at all for an unconfirmed address", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    const clientRow = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    const start = () => {
      const minted = mintTokens({ grantId: 0, clientId: clientRow.id, userId: user.id, scopes: ["readonly"] });
      return startGrantRow({ grant: { clientId: clientRow.id, userId: user.id, grantType: "password", scopes: "readonly", createdAt: now() }, access: minted.access, refresh: null, audit: null });
    };
    const grantId = await start();
    expect(grantId).toEqual(expect.any(Number));
    const written = async () => ({
      grants: await (await db()).grant.count({ where: { userId: user.id } }),
      access: await (await db()).accessToken.count({ where: { userId: user.id } }),
      refresh: await (await db()).refreshToken.count({ where: { userId: user.id } }),
      events: await (await db()).auditEvent.count({ where: { userId: user.id, type: "token.issued" } }),
    });
    expect(await written()).toEqual({ grants: 1, access: 1, refresh: 0, events: 0 });
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: null } }));
    expect(await start()).toBeNull();
    expect(await written()).toEqual({ grants: 1, access: 1, refresh: 0, events: 0 });
  });

  it("issues no refresh token when the grant has none (implicit)", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id, grantType: "implicit" });
    const clientRow = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    const record = await startGrant({ clientId: clientRow.id, publicClientId: client.client_id, userId: user.id, grantType: "implicit", scopes: ["readonly"], withRefreshToken: false });
    expect(record.refresh_token).toBeUndefined();
    const access = await (await db()).accessToken.findUniqueOrThrow({ where: { digest: digest(record.access_token) } });
    expect(await (await db()).refreshToken.count({ where: { grantId: access.grantId } })).toBe(0);
  });
});

describe("userByEmail", () => {
  it("reads the user exactly as Prisma does", async () => {
    const user = await makeUser();
    expect(await userByEmail(user.email)).toEqual(await (await db()).user.findUniqueOrThrow({ where: { email: user.email } }));
    expect(await userByEmail("nobody@example.test")).toBeNull();
  });
});

describe("clientByClientId", () => {
  it("reads the client exactly as Prisma does, every column with Prisma's types", async () => {
    const owner = await makeUser();
    for (const options of [{ firstParty: true }, { grantType: "authorization_code" as const, isPublic: true }]) {
      const client = await makeClient({ ownerId: owner.id, ...options });
      const viaPrisma = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
      expect(await clientByClientId(client.client_id)).toEqual(viaPrisma);
    }
    expect(await clientByClientId("no-such-client")).toBeNull();
  });
});

describe("reserveSlots and releaseSlots", () => {
  it("take a slot on every key or none, and say to the millisecond when the fullest key has room again", async () => {
    const tag = `${process.pid}-${Math.random()}`;
    const a = { key: `a-${tag}`, max: 2, windowMs: 10_000 };
    const b = { key: `b-${tag}`, max: 1, windowMs: 60_000 };
    const t0 = now().getTime();
    const at = (ms: number) => new Date(t0 + ms);
    const first = await reserveSlots([a], at(0));
    const second = await reserveSlots([a, b], at(1000));
    expect(first).toEqual({ ids: [expect.any(Number)] });
    expect(second).toEqual({ ids: [expect.any(Number), expect.any(Number)] });
    // a holds two attempts (at 0 and 1000): full until the one at 0 leaves its window.
    expect(await reserveSlots([a], at(2000))).toEqual({ waitMs: 8000 });
    // b (one attempt at 1000, a minute's window) waits longer: the longest wait is the answer, in either order.
    expect(await reserveSlots([a, b], at(2000))).toEqual({ waitMs: 59_000 });
    expect(await reserveSlots([b, a], at(2000))).toEqual({ waitMs: 59_000 });
    // Refused reservations took nothing: b alone, after a's window, is still full for the same attempt.
    expect(await reserveSlots([b], at(10_500))).toEqual({ waitMs: 50_500 });
    // Given back, the second reservation's slots are free again.
    await releaseSlots((second as { ids: number[] }).ids);
    await releaseSlots([]);
    const third = await reserveSlots([a, b], at(2000));
    expect(third).toEqual({ ids: [expect.any(Number), expect.any(Number)] });
    expect(await reserveSlots([a], at(2000))).toEqual({ waitMs: 8000 });
  });
});

describe("rotateRefreshToken", () => {
  const planFor = (grant: Awaited<ReturnType<typeof grantWithTokens>>) => (): RotationPlan => {
    const minted = mintTokens({ grantId: grant.grantId, clientId: grant.clientRow.id, userId: grant.user.id, scopes: ["readonly"], refreshScopes: ["readonly"] });
    return { at: now(), access: minted.access, refresh: minted.refresh!, audit: null };
  };

  it("hands the rules the token's row as stored, with whether its user's address is confirmed", async () => {
    const grant = await grantWithTokens({ scopes: ["readonly"] });
    const stored = await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(grant.record.refresh_token!) } });
    const seen: unknown[] = [];
    const refuse = (row: unknown): RotationPlan => {
      seen.push(row);
      throw new OAuthError("invalid_grant");
    };
    await expect(rotateRefreshToken(digest(grant.record.refresh_token!), refuse)).rejects.toThrow(OAuthError);
    await write((tx) => tx.user.update({ where: { id: grant.user.id }, data: { emailVerifiedAt: null } }));
    await write((tx) => tx.refreshToken.update({ where: { id: stored.id }, data: { usedAt: now(), revokedAt: now(), jkt: "thumbprint" } }));
    const changed = await (await db()).refreshToken.findUniqueOrThrow({ where: { id: stored.id } });
    await expect(rotateRefreshToken(digest(grant.record.refresh_token!), refuse)).rejects.toThrow(OAuthError);
    await expect(rotateRefreshToken(digest("no-such-token"), refuse)).rejects.toThrow(OAuthError);
    const row = (r: typeof stored, userConfirmed: boolean) => ({
      id: r.id, grantId: r.grantId, clientId: r.clientId, userId: r.userId, scopes: "readonly", expiresAt: r.expiresAt,
      usedAt: r.usedAt, revokedAt: r.revokedAt, jkt: r.jkt, audience: "/api", userConfirmed,
    });
    expect(seen).toEqual([row(stored, true), row(changed, false), null]);
    expect(changed.usedAt).toBeInstanceOf(Date);
  });

  it("on SQLite, a rule that throws something other than an Error still fails the rotation with an error, having written nothing", async () => {
    if (env().database.kind !== "sqlite") return; // (the group commit's: PostgreSQL passes on what the rule threw)
    const grant = await grantWithTokens();
    const failure = await rotateRefreshToken(digest(grant.record.refresh_token!), () => { throw undefined; }).then(() => "rotated", (error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe("write failed");
    expect((await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(grant.record.refresh_token!) } })).usedAt).toBeNull();
  });

  it("writes nothing when the rules refuse", async () => {
    const grant = await grantWithTokens();
    const before = await (await db()).accessToken.count({ where: { grantId: grant.grantId } });
    await expect(
      rotateRefreshToken(digest(grant.record.refresh_token!), (row) => {
        expect(row).toMatchObject({ grantId: grant.grantId, usedAt: null, revokedAt: null });
        throw new OAuthError("invalid_scope");
      }),
    ).rejects.toThrow(OAuthError);
    expect(await (await db()).accessToken.count({ where: { grantId: grant.grantId } })).toBe(before);
    expect((await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(grant.record.refresh_token!) } })).usedAt).toBeNull();
  });

  it("started while a Prisma transaction is open, waits for it rather than running inside it", async () => {
    const grant = await grantWithTokens();
    let rotation: Promise<void> | null = null;
    let transactionOpen = false;
    let rotatedWhileOpen: boolean | null = null;
    await expect(
      write(async (tx) => {
        transactionOpen = true;
        await tx.auditEvent.create({ data: { type: "token.revoked", at: now(), clientId: "rolled-back" } });
        rotation = rotateRefreshToken(digest(grant.record.refresh_token!), planFor(grant)).then(() => {
          rotatedWhileOpen = transactionOpen;
        });
        await new Promise((resolve) => setTimeout(resolve, 50));
        transactionOpen = false; // from here on Prisma rolls back, then releases the connection
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    await rotation;
    expect(rotatedWhileOpen).toBe((await import("@/env")).env().database.kind === "postgresql"); // its own connection there
    // Had the rotation joined the open transaction, the rollback would have taken its claim and tokens too.
    const used = await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(grant.record.refresh_token!) } });
    expect(used.usedAt).not.toBeNull();
    expect(await (await db()).accessToken.count({ where: { grantId: grant.grantId } })).toBe(2);
    expect(await (await db()).auditEvent.count({ where: { clientId: "rolled-back" } })).toBe(0);
  });

  it("asked for together, each rotation stands alone: one that fails after writing undoes only itself", async () => {
    const grants = [await grantWithTokens(), await grantWithTokens(), await grantWithTokens()];
    // The middle token is already used, and this caller's rules do not look: its grant row is written, then
    // the claim fails, and that write must go while the other two rotations commit.
    await write((tx) => tx.refreshToken.updateMany({ where: { digest: digest(grants[1]!.record.refresh_token!) }, data: { usedAt: now() } }));
    const lastUsedBefore = (await (await db()).grant.findUniqueOrThrow({ where: { id: grants[1]!.grantId } })).lastUsedAt;
    advanceClock(1000);
    const outcomes = await Promise.allSettled(grants.map((grant) => rotateRefreshToken(digest(grant.record.refresh_token!), planFor(grant))));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(LostRotation);
    const counts = await Promise.all(grants.map(async (grant) => (await db()).accessToken.count({ where: { grantId: grant.grantId } })));
    expect(counts).toEqual([2, 1, 2]);
    expect((await (await db()).grant.findUniqueOrThrow({ where: { id: grants[1]!.grantId } })).lastUsedAt).toEqual(lastUsedBefore);
  });

  it("on SQLite, counts no rotation as waiting for the group commit once it is done, committed or lost", async () => {
    if (env().database.kind !== "sqlite") return; // (each is one statement on PostgreSQL)
    const grants = [await grantWithTokens(), await grantWithTokens()];
    expect(groupedWritesWaiting()).toEqual({ writes: 0, batches: 0 });
    const rotations = grants.map((grant) => rotateRefreshToken(digest(grant.record.refresh_token!), planFor(grant)));
    await Promise.all(rotations);
    expect(groupedWritesWaiting()).toEqual({ writes: 0, batches: 0 });
    await expect(rotateRefreshToken(digest(grants[0]!.record.refresh_token!), planFor(grants[0]!))).rejects.toBeInstanceOf(LostRotation);
    expect(groupedWritesWaiting()).toEqual({ writes: 0, batches: 0 });
  });

  it("claims nothing once the token's grant alone is revoked, and writes nothing", async () => {
    const grant = await grantWithTokens();
    await write((tx) => tx.grant.update({ where: { id: grant.grantId }, data: { revokedAt: now() } }));
    await expect(rotateRefreshToken(digest(grant.record.refresh_token!), planFor(grant))).rejects.toBeInstanceOf(LostRotation);
    expect(await (await db()).accessToken.count({ where: { grantId: grant.grantId } })).toBe(1);
    expect((await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(grant.record.refresh_token!) } })).usedAt).toBeNull();
  });

  it("of concurrent rotations of one token exactly one claims it", async () => {
    const grant = await grantWithTokens();
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => rotateRefreshToken(digest(grant.record.refresh_token!), (row) => {
      if (row?.usedAt) throw new OAuthError("invalid_grant");
      return planFor(grant)();
    })));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    expect(await (await db()).accessToken.count({ where: { grantId: grant.grantId } })).toBe(2);
    expect(await (await db()).refreshToken.count({ where: { grantId: grant.grantId } })).toBe(2);
  });
});

describe("rotateAtOnce", () => {
  const postgres = () => env().database.kind === "postgresql";
  const attempt = (grant: Awaited<ReturnType<typeof grantWithTokens>>, clientId = grant.clientRow.id, withEvent = true) => {
    const at = now();
    return rotateAtOnce({
      digest: digest(grant.record.refresh_token!),
      clientId,
      at,
      accessDigest: digest(`access-${Math.random()}`),
      accessExpiresAt: new Date(at.getTime() + 3600_000),
      refreshDigest: digest(`refresh-${Math.random()}`),
      refreshExpiresAt: new Date(at.getTime() + 86_400_000),
      jkt: null,
      refreshJkt: null,
      audit: withEvent ? { type: "token.refreshed", clientId: grant.clientRow.clientId, ip: "192.0.2.9" } : null,
    });
  };

  it("on PostgreSQL claims a usable token and writes the whole rotation in one statement; on SQLite leaves it to rotateRefreshToken", async () => {
    const grant = await grantWithTokens({ scopes: ["readonly"] });
    const claimed = await attempt(grant);
    if (!postgres()) {
      expect(claimed).toBeNull();
      expect((await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(grant.record.refresh_token!) } })).usedAt).toBeNull();
      return;
    }
    expect(claimed).toEqual({ userId: grant.user.id, scopes: "readonly", audience: "/api" });
    expect(await (await db()).accessToken.count({ where: { grantId: grant.grantId } })).toBe(2);
    expect(await (await db()).refreshToken.count({ where: { grantId: grant.grantId, usedAt: null } })).toBe(1);
    const [event] = await (await db()).auditEvent.findMany({ where: { type: "token.refreshed", userId: grant.user.id } });
    expect(event).toMatchObject({ clientId: grant.clientRow.clientId, ip: "192.0.2.9", detail: JSON.stringify({ scope: "readonly" }) });
  });

  it("on PostgreSQL, with no event to record, rotates and records none", async () => {
    const grant = await grantWithTokens({ scopes: ["readonly"] });
    const claimed = await attempt(grant, grant.clientRow.id, false);
    if (!postgres()) return expect(claimed).toBeNull();
    expect(claimed).toEqual({ userId: grant.user.id, scopes: "readonly", audience: "/api" });
    expect(await (await db()).accessToken.count({ where: { grantId: grant.grantId } })).toBe(2);
    expect(await (await db()).auditEvent.count({ where: { type: "token.refreshed", userId: grant.user.id } })).toBe(0);
  });

  it("claims nothing, and writes nothing, for another client's, a used or an expired token", async () => {
    const other = await grantWithTokens();
    const used = await grantWithTokens();
    await write((tx) => tx.refreshToken.updateMany({ where: { digest: digest(used.record.refresh_token!) }, data: { usedAt: now() } }));
    const expiring = await grantWithTokens();
    // This test's own grants only: other files write tokens into the same database meanwhile.
    const own = { grantId: { in: [other.grantId, used.grantId, expiring.grantId] } };
    const rows = async () => [await (await db()).accessToken.count({ where: own }), await (await db()).refreshToken.count({ where: own })];
    const before = await rows();
    expect(await attempt(other, used.clientRow.id)).toBeNull();
    expect(await attempt(used)).toBeNull();
    advanceClock(31 * 24 * 3600 * 1000);
    expect(await attempt(expiring)).toBeNull();
    expect(await rows()).toEqual(before);
  });
});

describe("revocation racing rotation", () => {
  it("never leaves a live token: refreshes and a revocation fired together, ten rounds", async () => {
    let inFlight = 0;
    let mostInFlight = 0;
    const tracked = async <T>(work: () => Promise<T>): Promise<T> => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        return await work();
      } finally {
        inFlight--;
      }
    };
    for (let round = 0; round < 10; round++) {
      const user = await makeUser();
      const client = await makeClient({ ownerId: user.id });
      const auth = { client_id: client.client_id, client_secret: client.client_secret };
      const first = await call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "password", username: user.email, password: user.password, ...auth } });
      const refreshToken = String(first.json.refresh_token);
      const refreshes = Array.from({ length: 3 }, () =>
        tracked(() => call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "refresh_token", refresh_token: refreshToken, ...auth } })),
      );
      // Revocation by refresh token revokes the whole grant (RFC 7009 2.1), racing the rotations.
      const revocation = tracked(() => call("POST", "/api/connect/oauth2/revoke/", { body: { token: refreshToken, ...auth } }));
      const [revoked, ...refreshed] = await Promise.all([revocation, ...refreshes]);
      expect(revoked.status).toBe(200);
      const issued = [String(first.json.access_token), ...refreshed.filter((r) => r.status === 200).map((r) => String(r.json.access_token))];
      for (const r of refreshed.filter((x) => x.status !== 200)) expect(r.json).toEqual({ error: "invalid_grant" });
      for (const token of issued) {
        const read = await call("GET", `/api/user/${user.id}/`, { token });
        expect(read.status).toBe(401);
        expect(read.json).toEqual({ error: "invalid or expired token" });
      }
      for (const r of refreshed.filter((x) => x.status === 200)) {
        expect((await call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "refresh_token", refresh_token: String(r.json.refresh_token), ...auth } })).json).toEqual({ error: "invalid_grant" });
      }
    }
    expect(mostInFlight).toBe(4); // the revocation and the three refreshes of a round were in flight together
  });
});
