// The password hashing threads (src/users/hashing-threads.ts, docs/rules/accounts.md#password-hashing): each
// job answered once with its own answer, the next job taken without the event loop, and a thread that stops.
import { describe, expect, it } from "vitest";
import { until } from "@/testing/until";
import { runWithRequestContext } from "@/http/request-context";
import { hashingLoad, hashPassword, verifyPassword } from "@/users/passwords";
import { hashingThreadHooks, HashingThreadStopped } from "@/users/hashing-threads";

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
});
