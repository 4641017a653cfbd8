// Password hashing, its threads and the bound of its queue (src/users/passwords.ts, src/users/hashing-threads.ts).
import { describe, expect, it } from "vitest";
import { env, parseEnv, setEnvForTests } from "@/env";
import { ApiError } from "@/http/errors";
import { runWithRequestContext } from "@/http/request-context";
import { errorResponse } from "@/http/route";
import { HashingBusy, hashingLoad, hashingSlots, hashPassword, hashQueueBound, QUEUE_SECONDS, verifyPassword } from "@/users/passwords";

describe("hashingSlots", () => {
  it("is one hash at once per core of the process's share, never none", () => {
    expect(hashingSlots({ workers: 1 }, 2)).toBe(2);
    expect(hashingSlots({ workers: 1 }, 8)).toBe(8);
    expect(hashingSlots({ workers: 4 }, 8)).toBe(2);
    expect(hashingSlots({ workers: 3 }, 8)).toBe(3); // rounded up
    expect(hashingSlots({ workers: 3 }, 2)).toBe(1);
    expect(hashingSlots({ workers: 1 }, 1)).toBe(1);
  });
});

describe("verifyPassword", () => {
  it("accepts the right password only, and refuses any for an unknown user", async () => {
    const stored = await hashPassword("correct horse");
    expect(await verifyPassword(stored, "correct horse")).toBe(true);
    expect(await verifyPassword(stored, "wrong horse")).toBe(false);
    expect(await verifyPassword(null, "correct horse")).toBe(false);
    expect(await verifyPassword("not a hash", "correct horse")).toBe(false);
  });

  /** The most slots held and hashes waiting while `checks` verifications run at once. */
  async function peak(run: (check: () => Promise<boolean>) => Promise<boolean>, checks: number) {
    const stored = await hashPassword("correct horse");
    const slots = (globalThis as { __hashingSlots?: { size: number; busy: number; waiting: unknown[]; apiWaiting: unknown[] } }).__hashingSlots!;
    let mostBusy = 0;
    let mostWaiting = 0;
    let running = true;
    const watch = (async () => {
      while (running) {
        mostBusy = Math.max(mostBusy, slots.busy);
        mostWaiting = Math.max(mostWaiting, slots.waiting.length + slots.apiWaiting.length);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const results = await Promise.all(Array.from({ length: checks }, () => run(() => verifyPassword(stored, "correct horse"))));
    running = false;
    await watch;
    expect(results.every(Boolean)).toBe(true);
    return { mostBusy, mostWaiting, size: slots.size };
  }

  it("hands at most two hashes per thread to the threads for API requests; the rest wait their turn", async () => {
    const size = hashingLoad().slots;
    const inRequest = (check: () => Promise<boolean>) => runWithRequestContext({ ip: "192.0.2.1" }, check);
    const { mostBusy, mostWaiting } = await peak(inRequest, size * 3);
    expect(mostBusy).toBe(size);
    expect(mostWaiting).toBeGreaterThan(0);
  });

  it("leaves one thread (of two or more) to the API: the pages' hashes (and the CLI's) hold fewer places than there are threads", async () => {
    const { slots, threads } = hashingLoad();
    expect(slots).toBe(threads * 2);
    const { mostBusy, mostWaiting } = await peak((check) => check(), slots * 3);
    expect(mostBusy).toBe(Math.max(1, threads - 1));
    expect(mostWaiting).toBeGreaterThan(0);
  });
});

describe("the bound of the hashing queue", () => {
  it("is HASH_QUEUE when set, else the hashes the threads do in two seconds at the measured time per hash (at least one)", () => {
    expect(hashQueueBound({ hashQueue: 7 }, 2, 11)).toBe(7);
    expect(hashQueueBound({ hashQueue: null }, 2, 11)).toBe(363); // 2 x 2000 ms / 11 ms
    expect(hashQueueBound({ hashQueue: null }, 1, 20)).toBe(100);
    expect(hashQueueBound({ hashQueue: null }, 4, 40)).toBe(200);
    expect(hashQueueBound({ hashQueue: null }, 2, 3000)).toBe(1); // a very slow machine still queues one
    expect(QUEUE_SECONDS).toBe(2);
  });

  it("is derived from this process's measured hashing time when HASH_QUEUE is unset", async () => {
    expect(env().hashQueue).toBeNull();
    await hashPassword("measured");
    const load = hashingLoad();
    expect(load.msPerHash).toBeGreaterThan(0);
    expect(load.bound).toBe(hashQueueBound({ hashQueue: null }, load.threads, load.msPerHash!));
    const previous = setEnvForTests({ hashQueue: 3 });
    try {
      expect(hashingLoad().bound).toBe(3);
    } finally {
      setEnvForTests(previous);
    }
  });

  it("reads HASH_QUEUE, a positive integer", () => {
    const base = { NODE_ENV: "production", AUTH_SECRET: "s".repeat(32) };
    expect(parseEnv(base).hashQueue).toBeNull();
    expect(parseEnv({ ...base, HASH_QUEUE: "" }).hashQueue).toBeNull();
    expect(parseEnv({ ...base, HASH_QUEUE: "64" }).hashQueue).toBe(64);
    for (const bad of ["0", "-1", "1.5", "many"]) expect(() => parseEnv({ ...base, HASH_QUEUE: bad })).toThrow(/^Environment variable HASH_QUEUE must be a positive integer$/);
  });
});

describe("HashingBusy through the one error path (src/http/route.ts)", () => {
  const request = new Request("http://localhost:3000/api/x/", { method: "POST" });

  it("is 503 with Retry-After: 1: temporarily_unavailable at an OAuth endpoint, a sentence elsewhere", async () => {
    const oauth = errorResponse(new HashingBusy(), request, "oauth");
    expect({ status: oauth.status, retryAfter: oauth.headers.get("retry-after"), body: await oauth.json() }).toEqual({
      status: 503,
      retryAfter: "1",
      body: { error: "temporarily_unavailable" },
    });
    const api = errorResponse(new HashingBusy(), request, "api");
    expect({ status: api.status, retryAfter: api.headers.get("retry-after"), body: await api.json() }).toEqual({
      status: 503,
      retryAfter: "1",
      body: { error: "too many password checks right now, try again in a moment" },
    });
  });

  it("leaves other errors of an OAuth endpoint as they are", async () => {
    expect(await errorResponse(new ApiError(429, "rate_limited"), request, "oauth").json()).toEqual({ error: "rate_limited" });
  });
});
