// The limiter itself (src/limits/limiter.ts; docs/rules/accounts.md#limits): a reservation takes one slot on
// every key or none, in one atomic step, so that reservations made at once on one key pass at most its limit;
// slots go back when released (also when the work throws before deciding, as when the password-hashing pool is
// full); Retry-After says when the oldest counted attempt leaves the window; caps on live rows hold under a
// burst; IPv6 addresses count by their /64.
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { ApiError } from "@/http/errors";
import { db, write } from "@/db/client";
import { Barrier } from "@/testing/race";
import { fastSqlHooks } from "@/db/fast-sql";
import { env } from "@/env";
import { makeUser, uniqueEmail } from "@/testing/factories";
import { addressKey, assertUnderCapInTx, isRateLimited, limiterHooks, lockKeysInTx, reserve, reserveInTx, reserveWithUser, withReservation, type Limit } from "@/limits/limiter";

afterEach(() => {
  resetClock();
  limiterHooks.beforeReserve = undefined;
  limiterHooks.onStatement = undefined;
  fastSqlHooks.onPgStatement = undefined;
});

const key = (name: string) => `test:${name}:${randomBytes(6).toString("hex")}`;
const TEN: Limit = { max: 10, windowMs: 15 * 60 * 1000 };
const counted = async (k: string) => (await db()).failedAttempt.count({ where: { key: k } });
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => "taken",
    (error: unknown) => (isRateLimited(error) ? "429" : `error: ${String(error)}`),
  );

describe("reserve", () => {
  it("50 reservations held at the limiter and let go at once on a key with room for 10: exactly 10 are taken", async () => {
    const k = key("burst");
    const barrier = new Barrier(50);
    limiterHooks.beforeReserve = () => barrier.arrive();
    const results = await Promise.all(Array.from({ length: 50 }, () => outcome(reserve([{ key: k, limit: TEN }]))));
    expect(barrier.arrived).toBe(50);
    expect(results.filter((r) => r === "taken")).toHaveLength(10);
    expect(results.filter((r) => r === "429")).toHaveLength(40);
    expect(await counted(k)).toBe(10);
  });

  it("takes every key or none: a full key refuses the reservation and the others are not counted", async () => {
    const [full, open] = [key("full"), key("open")];
    for (let i = 0; i < 10; i++) await reserve([{ key: full, limit: TEN }]);
    await expect(reserve([{ key: open, limit: TEN }, { key: full, limit: TEN }])).rejects.toMatchObject({ status: 429, error: "rate_limited" });
    expect(await counted(open)).toBe(0);
    expect(await counted(full)).toBe(10);
  });

  it("says in Retry-After when the oldest counted attempt leaves the window, and lets the next one in then", async () => {
    const k = key("window");
    for (let i = 0; i < 5; i++) await reserve([{ key: k, limit: TEN }]);
    advanceClock(10 * 60 * 1000);
    for (let i = 0; i < 5; i++) await reserve([{ key: k, limit: TEN }]);
    const refused = (await reserve([{ key: k, limit: TEN }]).catch((error: unknown) => error)) as ApiError;
    expect(refused).toBeInstanceOf(ApiError);
    const retryAfter = Number(refused.headers["Retry-After"]);
    expect(retryAfter).toBeGreaterThan(290);
    expect(retryAfter).toBeLessThanOrEqual(300);
    advanceClock(retryAfter * 1000 + 1000);
    expect(await outcome(reserve([{ key: k, limit: TEN }]))).toBe("taken");
  });

  it("gives the slots back on release, and when the work throws before deciding (a full hashing pool)", async () => {
    const k = key("release");
    for (let i = 0; i < 10; i++) {
      const taken = await reserve([{ key: k, limit: TEN }]);
      await expect(withReservation(taken, () => Promise.reject(new ApiError(503, "temporarily_unavailable")))).rejects.toMatchObject({ status: 503 });
    }
    for (let i = 0; i < 10; i++) await (await reserve([{ key: k, limit: TEN }])).release();
    for (let i = 0; i < 10; i++) await withReservation(await reserve([{ key: k, limit: TEN }]), async () => "ok", () => false);
    expect(await counted(k)).toBe(0);
    // Counted outcomes keep theirs.
    for (let i = 0; i < 10; i++) await withReservation(await reserve([{ key: k, limit: TEN }]), async () => "failed");
    await expect(reserve([{ key: k, limit: TEN }])).rejects.toMatchObject({ status: 429 });
  });

  it("inside a transaction: counted when it commits, not when it rolls back; a burst passes at most the limit", async () => {
    const k = key("tx");
    await expect(
      write(async (tx) => {
        await reserveInTx(tx, [{ key: k, limit: TEN }]);
        throw new Error("the work failed");
      }),
    ).rejects.toThrow("the work failed");
    expect(await counted(k)).toBe(0);
    const results = await Promise.all(Array.from({ length: 25 }, () => outcome(write((tx) => reserveInTx(tx, [{ key: k, limit: TEN }])))));
    expect(results.filter((r) => r === "taken")).toHaveLength(10);
    expect(results.filter((r) => r === "429")).toHaveLength(15);
    expect(await counted(k)).toBe(10);
  });
});

describe("waiting for this process's attempts in flight", () => {
  const inTurns = async (k: string, count: number) => {
    let statements = 0;
    limiterHooks.onStatement = () => statements++;
    const barrier = new Barrier(count);
    limiterHooks.beforeReserve = () => barrier.arrive();
    const results = await Promise.all(
      Array.from({ length: count }, () =>
        outcome(
          reserve([{ key: k, limit: TEN }], { waitForInFlight: true }).then(async (taken) => {
            await new Promise((resolve) => setImmediate(resolve)); // the others meanwhile wait behind it
            await taken.release(); // a right password
          }),
        ),
      ),
    );
    expect(barrier.arrived).toBe(count);
    return { results, statements };
  };

  it("25 right passwords at once on a key with room for 10: all taken in turns, the database asked once for each, not once per waiter at every turn", async () => {
    const k = key("turns");
    const { results, statements } = await inTurns(k, 25);
    expect(results.filter((r) => r === "taken")).toHaveLength(25);
    expect(statements).toBe(25);
    expect(await counted(k)).toBe(0);
  });

  it("a reservation refused by the database lets the one waiting behind it ask: another key of the first was full, the shared key had room", async () => {
    const [full, mine, shared] = [key("full"), key("mine"), key("shared")];
    const ONE: Limit = { max: 1, windowMs: TEN.windowMs };
    for (let i = 0; i < 10; i++) await reserve([{ key: full, limit: TEN }]); // counted failures, none in flight
    const barrier = new Barrier(2);
    limiterHooks.beforeReserve = () => barrier.arrive();
    let statements = 0;
    limiterHooks.onStatement = () => statements++;
    // The first asks for `shared` (room for one) and is refused on `full`; the second waited behind its asking.
    let askedWhenFirstAnswered = 0;
    const [first, second] = await Promise.all([
      outcome(reserve([{ key: full, limit: TEN }, { key: shared, limit: ONE }], { waitForInFlight: true })).then((result) => {
        askedWhenFirstAnswered = statements;
        return result;
      }),
      outcome(reserve([{ key: mine, limit: TEN }, { key: shared, limit: ONE }], { waitForInFlight: true }).then((taken) => taken.keep())),
    ]);
    expect([first, second]).toEqual(["429", "taken"]);
    expect(statements).toBe(2);
    // Woken by the refusal itself, not by the in-flight wait's bound: it asked before the first's answer came back.
    expect(askedWhenFirstAnswered).toBe(2);
    expect(await counted(shared)).toBe(1);
  });
});

describe("reserveWithUser", () => {
  const ONE: Limit = { max: 1, windowMs: TEN.windowMs };

  it("brings the e-mail's user with the reservation and with its refusal, in the reservation's one statement on PostgreSQL", async () => {
    const user = await makeUser();
    const { passwordHash } = await (await db()).user.findUniqueOrThrow({ where: { id: user.id } });
    const k = key("with-user");
    const statements: string[] = [];
    fastSqlHooks.onPgStatement = (name) => statements.push(name);
    const taken = await reserveWithUser([{ key: k, limit: ONE }], user.email);
    const refused = await reserveWithUser([{ key: k, limit: ONE }], user.email);
    const nobody = await reserveWithUser([{ key: key("nobody"), limit: ONE }], uniqueEmail("nobody"));
    expect(statements).toEqual(env().database.kind === "postgresql" ? ["reserveSlotsWithUser", "reserveSlotsWithUser", "reserveSlotsWithUser"] : []);
    expect(taken).toEqual({ user: { id: user.id, passwordHash }, reservation: expect.objectContaining({ ids: [expect.any(Number)] }) });
    expect(refused).toEqual({ user: { id: user.id, passwordHash }, refusal: expect.objectContaining({ status: 429, error: "rate_limited" }) });
    expect(nobody).toEqual({ user: null, reservation: expect.objectContaining({ ids: [expect.any(Number)] }) });
    expect(await counted(k)).toBe(1);
  });

  it("refused, then passing once an attempt in flight is decided: the user comes from the statement that passed", async () => {
    const user = await makeUser();
    const k = key("with-user-waits");
    const TWO: Limit = { max: 2, windowMs: TEN.windowMs };
    await reserve([{ key: k, limit: TWO }]); // another instance's attempt: not in flight here
    const first = await reserveWithUser([{ key: k, limit: TWO }], user.email, { waitForInFlight: true });
    if (!("reservation" in first)) throw new Error("the first reservation was refused");
    let statements = 0;
    limiterHooks.onStatement = () => statements++;
    const second = reserveWithUser([{ key: k, limit: TWO }], user.email, { waitForInFlight: true });
    for (let turn = 0; turn < 50 && statements === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 50)); // its refusal has come back
    expect(statements).toBe(1); // asked, was refused (the key is full), and waits for the attempt in flight
    // Changed meanwhile (a password reset): the user must come from the statement that passed, not the refused one.
    await (await db()).user.update({ where: { id: user.id }, data: { passwordHash: "changed while waiting" } });
    await first.reservation.release(); // a right password
    const passed = await second;
    expect(statements).toBe(2);
    expect(passed).toEqual({ user: { id: user.id, passwordHash: "changed while waiting" }, reservation: expect.objectContaining({ ids: [expect.any(Number)] }) });
    if ("reservation" in passed) passed.reservation.keep();
  });
});

describe("waiting when another instance's attempts fill the key", () => {
  it("two refused reservations do not wake each other to ask again: each asks once more per attempt decided here", async () => {
    const k = key("elsewhere");
    for (let i = 0; i < 5; i++) await reserve([{ key: k, limit: TEN }]); // another instance's attempts: not in flight here
    const here = await Promise.all(Array.from({ length: 5 }, () => reserve([{ key: k, limit: TEN }], { waitForInFlight: true })));
    let statements = 0;
    limiterHooks.onStatement = () => statements++;
    const waiting = [0, 1].map(() => reserve([{ key: k, limit: TEN }], { waitForInFlight: true }).then((taken) => taken.release()));
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(statements).toBe(2); // both asked, both were refused, and both wait
    await here[0]!.release();
    await here[1]!.release();
    await Promise.all(waiting);
    for (const taken of here.slice(2)) await taken.release();
    expect(statements).toBeLessThanOrEqual(5);
  });
});

describe("a cap on live rows", () => {
  it("a burst of 30 inserts under a cap of 20: exactly 20 are kept", async () => {
    const k = key("cap");
    const insertOne = () =>
      write(async (tx) => {
        await lockKeysInTx(tx, [k]);
        const row = await tx.failedAttempt.create({ data: { key: k }, select: { id: true } });
        await assertUnderCapInTx({
          max: 20,
          live: () => tx.failedAttempt.count({ where: { key: k, id: { not: row.id } } }),
          ends: async () => null,
        });
      });
    const results = await Promise.all(Array.from({ length: 30 }, () => outcome(insertOne())));
    expect(results.filter((r) => r === "taken")).toHaveLength(20);
    expect(results.filter((r) => r === "429")).toHaveLength(10);
    expect(await counted(k)).toBe(20);
  });
});

describe("addressKey", () => {
  it("keeps an IPv4 address whole and counts an IPv6 address by its /64, however it is written", () => {
    expect(addressKey("203.0.113.10")).toBe("203.0.113.10");
    expect(addressKey("2001:db8:1:2::a")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:3::a")).toBe("2001:db8:1:3::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64");
    expect(addressKey("unknown")).toBe("unknown");
    expect(addressKey("1::2::3")).toBe("1::2::3");
  });
});
