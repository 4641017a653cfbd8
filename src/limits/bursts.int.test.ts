// Every limit is taken before the work it protects, in one atomic step (docs/rules/accounts.md#limits): a
// burst of N requests sent at once from one address passes at most the limit, whatever N. Each scene fires its
// burst at once through a Barrier (src/testing/race.ts): at the handler's entrance (its body, or the call
// itself for the functions the pages call), and checks that every request arrived before any went on.
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { signUp } from "@/accounts/sign-up";
import { createBundle } from "@/bundles/create-bundle";
import { setEnvForTests, type Env } from "@/env";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { makeClient, makeUser, passwordSession, uniqueEmail } from "@/testing/factories";
import { countHashWork } from "@/testing/hash-work";
import { Barrier, together } from "@/testing/race";
import { sessionCookie } from "@/testing/session";
import { deviceFormCsrfToken } from "@/device/verify-user-code";
import { signInWithPassword } from "@/users/sign-in";

const TOKEN = "/api/connect/oauth2/token/";
const REGISTER = "/api/connect/oauth2/register/";
const DEVICE = "/api/connect/oauth2/device/";
const REQUESTS = "/api/bundle_permission_request/";
const ISS = "http://localhost:3000";

let restore: Partial<Env> | undefined;
let hashQueue: Partial<Env>;
beforeEach(() => {
  // The bursts are about the limits: the password-hashing queue (src/users/passwords.ts) takes them all, so
  // that no attempt is refused as busy (a refusal that gives its slot back; src/limits/limiter.int.test.ts).
  hashQueue = setEnvForTests({ hashQueue: 10_000 });
});
afterEach(() => {
  resetClock();
  if (restore) setEnvForTests(restore);
  restore = undefined;
  setEnvForTests(hashQueue);
});

/** An address no other test uses. */
const freshAddress = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

/** Starts `count` calls at once: each waits at the barrier until all have been made. */
async function atOnce<T>(count: number, fn: (i: number) => Promise<T>): Promise<{ results: T[]; barrier: Barrier }> {
  const barrier = new Barrier(count);
  const results = await together(
    barrier,
    Array.from({ length: count }, (_, i) => barrier.arrive().then(() => fn(i))),
  );
  return { results, barrier };
}

/** Sends `count` requests at once: each handler gets its body only when every request has asked for its own. */
async function burst(count: number, send: (barrier: Barrier, i: number) => ReturnType<typeof call>) {
  const barrier = new Barrier(count);
  const results = await together(barrier, Array.from({ length: count }, (_, i) => send(barrier, i)));
  return { results, barrier, statuses: results.map((res) => res.status) };
}

const tally = (values: Array<string | number>) => values.reduce<Record<string, number>>((counts, value) => ({ ...counts, [value]: (counts[value] ?? 0) + 1 }), {});

describe("web sign-in under a burst", () => {
  it("60 wrong passwords at once for one e-mail from one address: 10 reach the hash and are counted, and the person still signs in from another address", async () => {
    const user = await makeUser();
    const attacker = freshAddress();
    const { result, work } = await countHashWork(() => atOnce(60, (i) => signInWithPassword({ email: user.email, password: `guess ${i}`, ip: attacker })));
    expect(result.barrier.arrived).toBe(60);
    expect(tally(result.results.map((r) => (r.ok ? "ok" : r.reason)))).toEqual({ invalid: 10, rate_limited: 50 });
    expect(work.verifications).toBeLessThanOrEqual(10);
    const failed = await (await db()).auditEvent.count({ where: { userId: user.id, type: "signin.failed" } });
    expect(failed).toBe(10);
    // The per-e-mail ceiling (50) is far away: the owner is not locked out.
    expect(await signInWithPassword({ email: user.email, password: user.password, ip: freshAddress() })).toMatchObject({ ok: true, user: { id: user.id } });
    expect(await signInWithPassword({ email: user.email, password: user.password, ip: attacker })).toMatchObject({ ok: false, reason: "rate_limited" });
  });

  it("25 right passwords at once for one e-mail from one address: every one signs in (in turns: an attempt in flight holds a slot), none is refused", async () => {
    const user = await makeUser();
    const address = freshAddress();
    const { results, barrier } = await atOnce(25, () => signInWithPassword({ email: user.email, password: user.password, ip: address }));
    expect(barrier.arrived).toBe(25);
    expect(tally(results.map((r) => (r.ok ? "ok" : r.reason)))).toEqual({ ok: 25 });
    // Nothing was counted: the slots of right passwords are given back.
    expect(await signInWithPassword({ email: user.email, password: "wrong", ip: address })).toEqual({ ok: false, reason: "invalid" });
  });

  it("120 sign-ins at once with random e-mails from one address: 100 failures, then that address is limited for every e-mail", async () => {
    const user = await makeUser();
    const attacker = freshAddress();
    const { results, barrier } = await atOnce(120, () => signInWithPassword({ email: uniqueEmail("spray"), password: "Winter2026!", ip: attacker }));
    expect(barrier.arrived).toBe(120);
    expect(tally(results.map((r) => (r.ok ? "ok" : r.reason)))).toEqual({ invalid: 100, rate_limited: 20 });
    expect(await signInWithPassword({ email: user.email, password: user.password, ip: attacker })).toMatchObject({ ok: false, reason: "rate_limited" });
    expect((await signInWithPassword({ email: user.email, password: user.password, ip: freshAddress() })).ok).toBe(true);
    advanceClock(15 * 60 * 1000 + 1000);
    expect((await signInWithPassword({ email: user.email, password: user.password, ip: attacker })).ok).toBe(true);
  });

  it("counts IPv6 addresses by their /64: 100 failures spread over one /64 limit all of it, not the next /64", async () => {
    const user = await makeUser();
    const [a, b] = [randomBytes(2).readUInt16BE(), randomBytes(2).readUInt16BE()];
    const prefix = `2001:db8:${a.toString(16)}:${b.toString(16)}`;
    const nextPrefix = `2001:db8:${a.toString(16)}:${(b ^ 1).toString(16)}`;
    const { results } = await atOnce(100, (i) => signInWithPassword({ email: uniqueEmail("v6"), password: "Winter2026!", ip: `${prefix}::${(i + 1).toString(16)}` }));
    expect(tally(results.map((r) => (r.ok ? "ok" : r.reason)))).toEqual({ invalid: 100 });
    expect(await signInWithPassword({ email: user.email, password: user.password, ip: `${prefix}:ffff:ffff:ffff:fffe` })).toMatchObject({ ok: false, reason: "rate_limited" });
    expect((await signInWithPassword({ email: user.email, password: user.password, ip: `${nextPrefix}::1` })).ok).toBe(true);
  });
});

describe("the password grant under a burst", () => {
  const attempt = (client: { client_id: string; client_secret: string | null }, username: string, password: string, barrier: Barrier) =>
    call("POST", TOKEN, { heldBy: barrier, body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username, password } });

  it("25 wrong passwords at once for one username: 10 reach the hash, the rest are 429 rate_limited", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const { result, work } = await countHashWork(() => burst(25, (barrier, i) => attempt(client, owner.email, `guess ${i}`, barrier)));
    expect(result.barrier.arrived).toBe(25);
    expect(tally(result.statuses)).toEqual({ 400: 10, 429: 15 });
    expect(work.verifications).toBeLessThanOrEqual(10);
    expect(result.results.find((res) => res.status === 429)!.json).toEqual({ error: "rate_limited" });
  });

  it("25 right passwords at once for one username: every one gets its token (in turns of 10), none is refused", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const { statuses, barrier } = await burst(25, (held) => attempt(client, owner.email, owner.password, held));
    expect(barrier.arrived).toBe(25);
    expect(tally(statuses)).toEqual({ 200: 25 });
  });

  it("a burst of 10 wrong and 10 right passwords for one username: the wrong ones fill the limit, and the right ones waiting behind them are then refused", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const { statuses, barrier } = await burst(20, (held, i) => attempt(client, owner.email, i < 10 ? `guess ${i}` : owner.password, held));
    expect(barrier.arrived).toBe(20);
    const counts = tally(statuses);
    // Exactly 10 failures are hashed and counted whatever the order; a right password passes only while a slot is free.
    expect(counts[400]).toBe(10);
    expect((counts[200] ?? 0) + (counts[429] ?? 0)).toBe(10);
  });

  it("40 wrong passwords at once for 40 usernames of one client: 30 failures, then the client is 429 for every username", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const { statuses, results, barrier } = await burst(40, (held, i) => attempt(client, `nobody-${i}@example.test`, "guess", held));
    expect(barrier.arrived).toBe(40);
    expect(tally(statuses)).toEqual({ 400: 30, 429: 10 });
    const limited = results.find((res) => res.status === 429)!;
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(800);
    const right = await call("POST", TOKEN, { body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: owner.email, password: owner.password } });
    expect({ status: right.status, body: right.json }).toEqual({ status: 429, body: { error: "rate_limited" } });
    advanceClock(15 * 60 * 1000 + 1000);
    const later = await call("POST", TOKEN, { body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: owner.email, password: owner.password } });
    expect(later.status).toBe(200);
  });
});

describe("registration under a burst", () => {
  it("60 registrations at once from one address: exactly 20 pass", async () => {
    restore = setEnvForTests({ registration: "open" });
    const address = freshAddress();
    const metadata = { client_name: "Agent", redirect_uris: ["https://agent.example.test/callback"], token_endpoint_auth_method: "none", grant_types: ["authorization_code"], response_types: ["code"] };
    const { statuses, barrier } = await burst(60, (held) => call("POST", REGISTER, { heldBy: held, body: metadata, headers: { "x-forwarded-for": address } }));
    expect(barrier.arrived).toBe(60);
    expect(tally(statuses)).toEqual({ 201: 20, 429: 40 });
    const events = await (await db()).auditEvent.count({ where: { type: "rate_limited", ip: address } });
    expect(events).toBe(40);
  });
});

describe("sign-up under a burst", () => {
  it("40 sign-ups at once from one address: exactly 10 pass, and at most 10 confirmation mails go out", async () => {
    const address = freshAddress();
    const emails = Array.from({ length: 40 }, () => uniqueEmail("signup"));
    const { results, barrier } = await atOnce(40, (i) =>
      signUp({ email: emails[i]!, password: "a long password", ip: address }).then(
        () => "ok",
        (error: { status?: number }) => String(error.status),
      ),
    );
    expect(barrier.arrived).toBe(40);
    expect(tally(results)).toEqual({ ok: 10, 429: 30 });
    const client = await db();
    expect(await client.user.count({ where: { email: { in: emails } } })).toBe(10);
    expect(await client.mailMessage.count({ where: { to: { in: emails } } })).toBe(10);
  });
});

describe("device-code guesses under a burst", () => {
  it("30 wrong codes at once by one person: 10 are looked up and counted, 20 get the 429 page", async () => {
    const owner = await makeUser();
    const user = await makeUser();
    await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
    const cookie = await sessionCookie(user);
    const form = new URLSearchParams({ user_code: "BBBB-BBBB", csrf: deviceFormCsrfToken(user.id) }).toString();
    const { statuses, results, barrier } = await burst(30, (held) =>
      call("POST", "/device/verify", { heldBy: held, raw: form, headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie } }),
    );
    expect(barrier.arrived).toBe(30);
    expect(tally(statuses)).toEqual({ 303: 10, 429: 20 });
    for (const res of results.filter((r) => r.status === 303)) expect(res.headers.get("location")).toMatch(/[?&]error=invalid$/);
  });
});

describe("permission-request creates under a burst", () => {
  it("80 refused creates at once by one requester: 60 are refused and counted, 20 are 429", async () => {
    const [owner, requester, stranger, allowed] = await Promise.all([makeUser(), passwordSession(), makeUser(), makeUser()]);
    const bundle = await createBundle({ ownerId: owner.id, name: "Probed" });
    const { statuses, barrier } = await burst(80, (held) =>
      call("POST", REQUESTS, { heldBy: held, token: requester.accessToken, body: { bundle: bundle.id, user_allowed: allowed.id, user_target: stranger.id } }),
    );
    expect(barrier.arrived).toBe(80);
    expect(tally(statuses)).toEqual({ 400: 60, 429: 20 });
    // Every create is now 429 for this requester, even a valid one.
    expect((await call("POST", REQUESTS, { token: requester.accessToken, body: { bundle: bundle.id, user_allowed: allowed.id, user_target: owner.id } })).status).toBe(429);
  });

  it("30 valid creates at once by one requester, to 30 owners: exactly 20 are created and mailed", async () => {
    const requester = await passwordSession();
    const owners = await Promise.all(Array.from({ length: 30 }, () => makeUser()));
    const bundles = await Promise.all(owners.map((owner) => createBundle({ ownerId: owner.id, name: "Shared" })));
    const { statuses, barrier } = await burst(30, (held, i) =>
      call("POST", REQUESTS, { heldBy: held, token: requester.accessToken, body: { bundle: bundles[i]!.id, user_allowed: requester.user.id, user_target: owners[i]!.id } }),
    );
    expect(barrier.arrived).toBe(30);
    expect(tally(statuses)).toEqual({ 201: 20, 429: 10 });
    expect(await (await db()).mailMessage.count({ where: { to: { in: owners.map((owner) => owner.email) } } })).toBe(20);
  });
});

describe("live device authorizations and pushed requests per client", () => {
  it("at most 100 unexpired device authorizations per client: a burst of 110 gives 100, the 101st is 429 until one expires", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
    const { statuses, barrier } = await burst(110, (held) => call("POST", DEVICE, { heldBy: held, body: { client_id: client.client_id } }));
    expect(barrier.arrived).toBe(110);
    expect(tally(statuses)).toEqual({ 200: 100, 429: 10 });
    const next = await call("POST", DEVICE, { body: { client_id: client.client_id } });
    expect({ status: next.status, body: next.json }).toEqual({ status: 429, body: { error: "rate_limited" } });
    expect(Number(next.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(next.headers.get("retry-after"))).toBeLessThanOrEqual(600);
    // Another client is not affected; and once they expire, the client may start again.
    const other = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
    expect((await call("POST", DEVICE, { body: { client_id: other.client_id } })).status).toBe(200);
    advanceClock(601 * 1000);
    expect((await call("POST", DEVICE, { body: { client_id: client.client_id } })).status).toBe(200);
  });

  it("at most 100 unexpired pushed requests per client: a burst of 110 gives 100, the 101st is 429 until one expires", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", isPublic: false, firstParty: true });
    const form = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      client_secret: client.client_secret!,
      redirect_uri: "https://client.example.test/callback",
      scope: "readonly",
      state: "s",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    }).toString();
    const push = (held?: Barrier) => call("POST", "/api/connect/oauth2/par/", { heldBy: held, raw: form, headers: { "content-type": "application/x-www-form-urlencoded" } });
    const { statuses, barrier } = await burst(110, (held) => push(held));
    expect(barrier.arrived).toBe(110);
    expect(tally(statuses)).toEqual({ 201: 100, 429: 10 });
    const next = await push();
    expect({ status: next.status, body: next.json }).toEqual({ status: 429, body: { error: "rate_limited" } });
    expect(Number(next.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    advanceClock(61 * 1000);
    expect((await push()).status).toBe(201);
  });
});
