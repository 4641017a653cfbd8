// Password hashing is a bounded resource (docs/rules/accounts.md#password-hashing): at most HASH_QUEUE hashes
// wait for a place at the hashing threads; a request beyond that is answered at once, 503 with Retry-After: 1
// (temporarily_unavailable at the token endpoint, RFC 6749 4.1.2.1), instead of queueing behind the others.
// The hashing threads are held (hashingThreadHooks, src/users/hashing-threads.ts) so that the admitted hashes
// stay in their places while the burst arrives: the refusals are seen while every request of the burst is
// inside the queue, and before any admitted one ends.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { until } from "@/testing/until";
import { setEnvForTests, type Env } from "@/env";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { HashingBusy, hashingLoad } from "@/users/passwords";
import { signInWithPassword } from "@/users/sign-in";
import { makeClient, makeUser, uniqueEmail } from "@/testing/factories";
import { hashingThreadHooks } from "@/users/hashing-threads";
import { Barrier } from "@/testing/race";

const TOKEN = "/api/connect/oauth2/token/";
const QUEUE = 2;
const EXCESS = 3;

const slots = () => {
  const load = hashingLoad();
  return { size: load.slots, threads: load.threads, pageSlots: load.pageSlots, busy: load.busy, waiting: load.waiting.api + load.waiting.pages, api: load.waiting.api };
};


let previous: Partial<Env>;
beforeEach(() => {
  previous = setEnvForTests({ hashQueue: QUEUE });
});
afterEach(() => {
  setEnvForTests(previous);
});

describe("a burst of password grants beyond the hashing slots and HASH_QUEUE", () => {
  it("answers the excess at once with 503, Retry-After: 1 and temporarily_unavailable, while the admitted ones wait; these then succeed", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    const body = { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password };
    // One grant first: every module loaded, the hashing slots made.
    expect((await call("POST", TOKEN, { body })).status).toBe(200);
    const size = slots().size;
    const burst = size + QUEUE + EXCESS;

    const pool = hashingThreadHooks.hold();
    const settled: Array<Awaited<ReturnType<typeof call>>> = [];
    let snapshot = { busy: -1, waiting: -1 };
    try {
      const barrier = new Barrier(burst);
      const requests = Array.from({ length: burst }, () =>
        call("POST", TOKEN, { body, heldBy: barrier }).then((response) => {
          settled.push(response);
          return response;
        }),
      );
      // Every request of the burst is in a slot, waiting for one, or answered.
      await until(
        () => slots().busy + slots().waiting + settled.length === burst,
        () => `busy ${slots().busy}, waiting ${slots().waiting}, answered ${settled.length} of ${burst}`,
      );
      snapshot = { busy: slots().busy, waiting: slots().api }; // the API's queue: grants are API requests
      const answeredWhileHeld = settled.map((response) => ({ status: response.status, retryAfter: response.headers.get("retry-after"), body: response.json }));
      expect(barrier.arrived).toBe(burst); // they overlapped
      expect(snapshot).toEqual({ busy: size, waiting: QUEUE });
      expect(answeredWhileHeld).toEqual(Array.from({ length: EXCESS }, () => ({ status: 503, retryAfter: "1", body: { error: "temporarily_unavailable" } })));
      pool.release();
      const answers = await Promise.all(requests);
      const admitted = answers.filter((response) => response.status !== 503);
      expect(admitted).toHaveLength(size + QUEUE);
      for (const response of admitted) expect({ status: response.status, tokenType: response.json.token_type }).toEqual({ status: 200, tokenType: "Bearer" });
      // A refusal is no failed attempt: nothing counted against the client or the e-mail.
      expect(await (await db()).failedAttempt.count({ where: { OR: [{ key: { contains: user.email } }, { key: { contains: client.client_id } }] } })).toBe(0);
    } finally {
      pool.release();
    }
  });

  it("does the same for an unknown e-mail (its hash is the dummy one) and for a wrong password: 503, not invalid_grant", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    const client_id = client.client_id;
    const body = (username: string, password: string) => ({ grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username, password });
    expect((await call("POST", TOKEN, { body: body(uniqueEmail("nobody"), "whatever") })).json).toEqual({ error: "invalid_grant" });
    const size = slots().size;
    const pool = hashingThreadHooks.hold();
    try {
      // Counted before the burst: each grant in flight holds a slot of the limit until it is decided
      // (src/limits/limiter.ts).
      const failures = () => db().then((client) => client.failedAttempt.count({ where: { key: { contains: client_id } } }));
      const before = await failures();
      // Fill the slots and the queue with grants for the owner, then one for nobody and one wrong password.
      const filling = Array.from({ length: size + QUEUE }, () => call("POST", TOKEN, { body: body(user.email, user.password) }));
      await until(
        () => slots().busy + slots().waiting === size + QUEUE,
        () => `busy ${slots().busy}, waiting ${slots().waiting}`,
      );
      const late: Array<Awaited<ReturnType<typeof call>>> = [];
      void call("POST", TOKEN, { body: body(uniqueEmail("nobody"), "whatever") }).then((response) => late.push(response));
      void call("POST", TOKEN, { body: body(user.email, "not the password") }).then((response) => late.push(response));
      await until(
        () => late.length === 2,
        () => `${late.length} of the 2 requests beyond the queue answered while the queue was full`,
      );
      for (const response of late) {
        expect({ status: response.status, retryAfter: response.headers.get("retry-after"), body: response.json }).toEqual({ status: 503, retryAfter: "1", body: { error: "temporarily_unavailable" } });
      }
      pool.release();
      expect((await Promise.all(filling)).map((response) => response.status)).toEqual(Array.from({ length: size + QUEUE }, () => 200));
      expect(await failures()).toBe(before); // a refusal is no failed attempt
    } finally {
      pool.release();
    }
  });

  it("a flood of web sign-ins that fills the pages' queue refuses no password grant: the grant is handed to the thread kept for the API at once, and succeeds", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    const body = { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password };
    expect((await call("POST", TOKEN, { body })).status).toBe(200);
    const pages = slots().pageSlots; // fewer than the threads: one is kept for the API
    expect(pages).toBe(Math.max(1, slots().threads - 1));
    const pool = hashingThreadHooks.hold();
    try {
      // Web sign-ins (no API request) with random e-mails: the pages' places and queue full, one refused.
      const flood = Array.from({ length: pages + QUEUE }, () => signInWithPassword({ email: uniqueEmail("flood"), password: "guess", ip: "198.51.100.9" }));
      await until(
        () => slots().busy === pages && slots().waiting === QUEUE,
        () => `busy ${slots().busy}, waiting ${slots().waiting}`,
      );
      await expect(signInWithPassword({ email: uniqueEmail("flood"), password: "guess", ip: "198.51.100.9" })).rejects.toBeInstanceOf(HashingBusy);
      const grant = call("POST", TOKEN, { body });
      // The grant is handed to the threads at once, beside the flood's hashes, in a place the pages may not
      // take: with two threads or more, the pages' hashes leave one thread to the API's; with one, the
      // grant's hash runs next after the page's that runs.
      await until(
        () => slots().busy === pages + 1 && slots().api === 0,
        () => `the grant was not handed over at once (busy ${slots().busy}, waiting ${slots().waiting})`,
      );
      pool.release();
      const answered = await grant;
      expect({ status: answered.status, tokenType: answered.json.token_type }).toEqual({ status: 200, tokenType: "Bearer" });
      expect(await Promise.all(flood)).toEqual(Array.from({ length: pages + QUEUE }, () => ({ ok: false, reason: "invalid" })));
    } finally {
      pool.release();
    }
  });
});
