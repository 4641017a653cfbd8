// The password hashing threads (src/users/hashing-threads.ts, docs/rules/accounts.md#password-hashing): each
// job answered once with its own answer, the next job taken without the event loop, and a thread that stops.
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { until } from "@/testing/until";
import { runWithRequestContext } from "@/http/request-context";
import { hashingLoad, hashPassword, verifyPassword } from "@/users/passwords";
import { errorResponse } from "@/http/route";
import { hashingThreadCount, hashingThreadHooks, HashingThreadStopped, runOnHashingThread } from "@/users/hashing-threads";

/** Checks asked for by an API request may take every place (src/users/passwords.ts). */
const asApi = <T>(work: () => Promise<T>) => runWithRequestContext({ ip: "192.0.2.1" }, work);

describe("the hashing threads", () => {
  it("answer each of many jobs handed over at once with its own answer", async () => {
    const [first, second] = await Promise.all([hashPassword("first password"), hashPassword("second password")]);
    const checks = Array.from({ length: 12 }, (_, i) => ({
      stored: i % 2 === 0 ? first : second,
      password: i % 3 === 0 ? "first password" : "second password",
    }));
    const from = hashingThreadHooks.answered();
    const answers = await Promise.all(checks.map((check) => verifyPassword(check.stored, check.password)));
    expect(answers).toEqual(checks.map((check) => (check.stored === first) === (check.password === "first password")));
    expect(hashingThreadHooks.answered() - from).toBe(checks.length); // each job run by one thread only
  });

  it("are handed two checks each, and take the second the moment they end the first, without the event loop", async () => {
    const stored = await hashPassword("made"); // the threads exist
    const { threads } = hashingLoad();
    const from = hashingThreadHooks.answered();
    const checks = Array.from({ length: threads * 2 }, () => asApi(() => verifyPassword(stored, "made")));
    await until(() => hashingLoad().busy === threads * 2, () => `${hashingLoad().busy} of ${threads * 2} handed over`);
    // Now this thread (and its event loop) blocks until every check is answered. Were each next check handed
    // over by the event loop once a thread's answer arrived, only the first of each thread would end.
    expect(hashingThreadHooks.waitForAnswers(from, threads * 2, 60_000)).toBe(true);
    expect(await Promise.all(checks)).toEqual(Array.from({ length: threads * 2 }, () => true));
  });

  it("a thread that stops fails the job it had taken (503, not a wrong password); new threads take their places and the jobs nobody had taken", async () => {
    const stored = await hashPassword("right");
    const { threads } = hashingLoad();
    const afterTaking = hashingThreadHooks.holdTaken();
    const beforeTaking = { release: () => {} };
    let stopped: Promise<boolean>;
    const others: Array<Promise<boolean>> = [];
    try {
      stopped = asApi(() => verifyPassword(stored, "right"));
      stopped.catch(() => {}); // looked at below
      await until(() => hashingThreadHooks.takenBy().length === 1, () => `taken by ${hashingThreadHooks.takenBy().join(", ") || "none"}`);
      // The other threads now stop before taking a job: these three are handed over and taken by nobody.
      Object.assign(beforeTaking, hashingThreadHooks.hold());
      for (let i = 0; i < 3; i++) others.push(asApi(() => verifyPassword(stored, i === 1 ? "wrong" : "right")));
      await until(() => hashingLoad().busy === 4, () => `${hashingLoad().busy} handed over`);
      expect(hashingThreadHooks.takenBy()).toHaveLength(1);
      for (let index = 0; index < threads; index++) await hashingThreadHooks.stop(index); // every thread
    } finally {
      afterTaking.release();
      beforeTaking.release();
    }
    const failure = await stopped.then(() => null, (error: unknown) => error);
    expect(failure).toBeInstanceOf(HashingThreadStopped);
    expect((failure as HashingThreadStopped).status).toBe(503);
    expect(await Promise.all(others)).toEqual([true, false, true]);
    expect(await verifyPassword(stored, "right")).toBe(true);
    expect(hashingLoad().busy).toBe(0);
  });

  it("answer a hash with argon2id's hash, a check with whether the password matched, and a malformed hash with argon2's own error", async () => {
    const { threads } = hashingLoad();
    const options = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 };
    const made = await runOnHashingThread({ op: "hash", password: "on a thread", options }, threads);
    expect(made).toEqual({ value: expect.stringMatching(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/), ms: expect.any(Number) });
    const hash = (made as { value: string }).value;
    expect(await runOnHashingThread({ op: "verify", hash, password: "on a thread" }, threads)).toEqual({ value: true, ms: expect.any(Number) });
    expect(await runOnHashingThread({ op: "verify", hash, password: "elsewhere" }, threads)).toEqual({ value: false, ms: expect.any(Number) });
    const malformed = await runOnHashingThread({ op: "verify", hash: "not a hash", password: "on a thread" }, threads);
    expect(malformed).toEqual({ error: expect.stringMatching(/.+/), ms: expect.any(Number) });
    expect(malformed).not.toHaveProperty("value");
  });

  it("are one per hashing slot of the process", async () => {
    await hashPassword("the threads exist");
    expect(hashingThreadCount()).toBe(hashingLoad().threads);
  });

  // Two threads at least: one per core of the process's share (a one-core machine has one).
  it.skipIf(availableParallelism() < 2)("a thread that stops fails only the job it had taken: the job another thread had taken is answered", async () => {
    const stored = await hashPassword("right");
    const { threads } = hashingLoad();
    expect(threads).toBeGreaterThanOrEqual(2);
    const afterTaking = hashingThreadHooks.holdTaken();
    let checks: Array<Promise<boolean | unknown>> = [];
    try {
      checks = Array.from({ length: threads }, () => asApi(() => verifyPassword(stored, "right")).catch((error: unknown) => error));
      await until(() => hashingThreadHooks.takenBy().length === threads, () => `taken by ${hashingThreadHooks.takenBy().join(", ") || "none"}`);
      expect(hashingThreadHooks.takenBy().sort()).toEqual(Array.from({ length: threads }, (_, index) => index));
      await hashingThreadHooks.stop(threads - 1); // the last thread only
    } finally {
      afterTaking.release();
    }
    const outcomes = await Promise.all(checks);
    expect(outcomes.filter((outcome) => outcome instanceof HashingThreadStopped)).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === true)).toHaveLength(threads - 1);
    expect(hashingThreadCount()).toBe(threads);
    expect(await verifyPassword(stored, "right")).toBe(true);
    await expect(hashingThreadHooks.stop(threads)).resolves.toBeUndefined(); // no such thread: nothing stops
    expect(hashingThreadCount()).toBe(threads);
  });

  it("number jobs up to 2^31 - 2 and then from 1 again, never 0 nor a thread's mark, each answered with its own answer", async () => {
    const [first, second] = await Promise.all([hashPassword("first"), hashPassword("second")]);
    const threads = (globalThis as { __hashingThreads?: { nextId: number } }).__hashingThreads!;
    threads.nextId = 0x7ffffffe - 3; // the last ids, whose words are the last of the shared memory
    const checks = Array.from({ length: 8 }, (_, i) => ({ stored: i % 2 === 0 ? first : second, password: i % 3 === 0 ? "first" : "second" }));
    const answers = await Promise.all(checks.map((check) => asApi(() => verifyPassword(check.stored, check.password))));
    expect(answers).toEqual(checks.map((check) => (check.stored === first) === (check.password === "first")));
    expect(threads.nextId).toBe(5); // 2^31 - 4 .. 2^31 - 2, then 1 .. 5
  });

  it("a new thread finds argon2 from the working directory when the entry script is elsewhere, or when there is none", async () => {
    const stored = await hashPassword("found");
    const entry = process.argv[1];
    try {
      for (const elsewhere of ["/nonexistent/entry.js", undefined]) {
        process.argv[1] = elsewhere as string;
        for (let index = 0; index < hashingThreadCount(); index++) await hashingThreadHooks.stop(index); // replaced by threads started now
        const checks = Array.from({ length: hashingLoad().threads * 2 }, () => asApi(() => verifyPassword(stored, "found")));
        expect(await Promise.all(checks)).toEqual(checks.map(() => true));
      }
    } finally {
      process.argv[1] = entry!;
    }
  });

  it("HashingThreadStopped is 503 with Retry-After: 1: temporarily_unavailable at an OAuth endpoint, a sentence elsewhere", async () => {
    const request = new Request("http://localhost:3000/api/x/", { method: "POST" });
    const oauth = errorResponse(new HashingThreadStopped(), request, "oauth");
    expect({ status: oauth.status, retryAfter: oauth.headers.get("retry-after"), body: await oauth.json() }).toEqual({ status: 503, retryAfter: "1", body: { error: "temporarily_unavailable" } });
    const api = errorResponse(new HashingThreadStopped(), request, "api");
    expect(await api.json()).toEqual({ error: "the password check could not be done, try again in a moment" });
    expect(new HashingThreadStopped().name).toBe("HashingThreadStopped"); // as the logs name it
  });

  it("are none before the first hash: the hooks then tell of no thread, and holding them asks for a hash first", async () => {
    const holder = globalThis as { __hashingThreads?: unknown };
    await hashPassword("made"); // the threads this file uses, put back below
    const kept = holder.__hashingThreads;
    holder.__hashingThreads = undefined;
    try {
      expect({ count: hashingThreadCount(), answered: hashingThreadHooks.answered(), takenBy: hashingThreadHooks.takenBy() }).toEqual({ count: 0, answered: 0, takenBy: [] });
      expect(() => hashingThreadHooks.hold()).toThrow(/^no hashing threads yet: hash once first$/);
      await expect(hashingThreadHooks.stop(0)).resolves.toBeUndefined();
    } finally {
      holder.__hashingThreads = kept;
    }
  });

  it("waitForAnswers says no when the threads answer nothing within its time", async () => {
    await hashPassword("made");
    expect(hashingThreadHooks.waitForAnswers(hashingThreadHooks.answered(), 1, 20)).toBe(false); // no job handed over
    expect(hashingThreadHooks.waitForAnswers(hashingThreadHooks.answered(), 0, 20)).toBe(true);
  });

  it("a hold released twice does not release a later hold", async () => {
    const stored = await hashPassword("held");
    const { threads } = hashingLoad();
    const control = (globalThis as { __hashingThreads?: { control: Int32Array } }).__hashingThreads!.control;
    const first = hashingThreadHooks.hold();
    first.release();
    const second = hashingThreadHooks.hold();
    try {
      first.release();
      expect(Atomics.load(control, 0)).toBe(1); // the threads are still held before their next job
      const checks = Array.from({ length: threads }, () => asApi(() => verifyPassword(stored, "held")));
      await until(() => hashingLoad().busy === threads, () => `${hashingLoad().busy} handed over`);
      expect(hashingThreadHooks.takenBy()).toEqual([]);
      second.release();
      expect(await Promise.all(checks)).toEqual(checks.map(() => true));
    } finally {
      second.release();
    }
  });
});
