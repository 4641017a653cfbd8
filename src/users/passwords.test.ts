// Password hashing, its threads and the bound of its queue (src/users/passwords.ts, src/users/hashing-threads.ts).
import { describe, expect, it } from "vitest";
import { env, parseEnv, setEnvForTests, type Env } from "@/env";
import { ApiError } from "@/http/errors";
import { runWithRequestContext } from "@/http/request-context";
import { errorResponse } from "@/http/route";
import { until } from "@/testing/until";
import { hashingThreadHooks } from "@/users/hashing-threads";
import { HashingBusy, hashingLoad, hashingSlots, hashPassword, hashQueueBound, measureHashingAtStart, QUEUE_SECONDS, verifyPassword } from "@/users/passwords";

const inRequest = <T>(work: () => Promise<T>) => runWithRequestContext({ ip: "192.0.2.1" }, work);

/**
 * Runs `work` with the process's hashing queues made anew, as at start (nothing measured, the API's turn
 * first), under `env`; the threads stay. Then puts the queues back as they were.
 */
async function withFreshQueues(env: Partial<Env>, work: () => Promise<void>): Promise<void> {
  const holder = globalThis as { __hashingSlots?: unknown };
  const kept = holder.__hashingSlots;
  const previous = setEnvForTests(env);
  holder.__hashingSlots = undefined;
  try {
    await work();
  } finally {
    holder.__hashingSlots = kept;
    setEnvForTests(previous);
  }
}

/**
 * Takes every hashing place with an API check of `password` against `stored`, and waits until all are taken.
 * Call it with the threads held (hashingThreadHooks.hold()), so that none of them ends.
 */
async function fillEveryPlace(stored: string, password: string): Promise<{ slots: number; checks: Array<Promise<boolean>> }> {
  const { slots } = hashingLoad();
  const checks = Array.from({ length: slots }, () => inRequest(() => verifyPassword(stored, password)));
  await until(() => hashingLoad().busy === slots, () => `${hashingLoad().busy} of ${slots} places taken`);
  return { slots, checks };
}

/** The jobs handed to the threads while `work` runs: a hash's password, or "check <password>". */
async function jobsOf(work: () => Promise<unknown>): Promise<string[]> {
  const jobs: string[] = [];
  const previous = hashingThreadHooks.onJob;
  hashingThreadHooks.onJob = (job) => jobs.push(job.op === "hash" ? job.password : `check ${job.password}`);
  try {
    await work();
  } finally {
    hashingThreadHooks.onJob = previous;
  }
  return jobs;
}

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

  it("checks the password of an unknown user against a real argon2id hash, made once (equal work for unknown e-mails)", async () => {
    const checked: string[] = [];
    const previous = hashingThreadHooks.onJob;
    hashingThreadHooks.onJob = (job) => {
      if (job.op === "verify") checked.push(job.hash);
    };
    try {
      expect(await verifyPassword(null, "correct horse")).toBe(false);
      expect(await verifyPassword(null, "another")).toBe(false);
    } finally {
      hashingThreadHooks.onJob = previous;
    }
    expect(checked).toHaveLength(2);
    expect(checked[0]).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(checked[1]).toBe(checked[0]);
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
    expect(new HashingBusy().name).toBe("HashingBusy"); // as the logs name it
  });

  it("leaves other errors of an OAuth endpoint as they are", async () => {
    expect(await errorResponse(new ApiError(429, "rate_limited"), request, "oauth").json()).toEqual({ error: "rate_limited" });
  });
});

describe("the two queues", () => {
  it("give a free place to each in turn while both wait, the API's first", async () => {
    const stored = await hashPassword("turns");
    await withFreshQueues({ hashQueue: 10 }, async () => {
      const pool = hashingThreadHooks.hold();
      try {
        const { checks: filling } = await fillEveryPlace(stored, "filler");
        const order = await jobsOf(async () => {
          const page = verifyPassword(stored, "page");
          const apis = [inRequest(() => verifyPassword(stored, "api 1")), inRequest(() => verifyPassword(stored, "api 2"))];
          await until(() => hashingLoad().waiting.api === 2 && hashingLoad().waiting.pages === 1, () => JSON.stringify(hashingLoad().waiting));
          pool.release();
          await Promise.all([...filling, page, ...apis]);
        });
        expect(order).toEqual(["check api 1", "check page", "check api 2"]);
        expect(hashingLoad().busy).toBe(0);
      } finally {
        pool.release();
      }
    });
  });

  it("each refuse a check beyond HASH_QUEUE at once, before any work, and count it; the admitted ones are answered", async () => {
    const stored = await hashPassword("refused");
    await withFreshQueues({ hashQueue: 1 }, async () => {
      const pool = hashingThreadHooks.hold();
      try {
        const { slots, checks: admitted } = await fillEveryPlace(stored, "refused");
        admitted.push(inRequest(() => verifyPassword(stored, "refused")), verifyPassword(stored, "refused"));
        await until(() => hashingLoad().waiting.api === 1 && hashingLoad().waiting.pages === 1, () => JSON.stringify(hashingLoad().waiting));
        const refusals = await jobsOf(async () => {
          await expect(inRequest(() => verifyPassword(stored, "refused"))).rejects.toBeInstanceOf(HashingBusy);
          await expect(verifyPassword(stored, "refused")).rejects.toBeInstanceOf(HashingBusy);
          await expect(hashPassword("refused")).rejects.toBeInstanceOf(HashingBusy);
        });
        expect(refusals).toEqual([]);
        expect(hashingLoad()).toMatchObject({ busy: slots, waiting: { api: 1, pages: 1 }, bound: 1, refused: 3 });
        pool.release();
        expect(await Promise.all(admitted)).toEqual(admitted.map(() => true));
      } finally {
        pool.release();
      }
    });
  });
});

describe("the measured hashing time", () => {
  it("is measured once, at start, from a warm-up and three hashes; then kept", async () => {
    await withFreshQueues({ hashQueue: null }, async () => {
      expect(hashingLoad()).toMatchObject({ msPerHash: null, bound: Number.POSITIVE_INFINITY }); // nothing measured yet
      const jobs = await jobsOf(async () => {
        const [first, second] = [measureHashingAtStart(), measureHashingAtStart()];
        expect(second).toBe(first);
        await first;
        await measureHashingAtStart();
      });
      expect(jobs).toEqual(["warm-up", "measure-0", "measure-1", "measure-2"]);
      const { msPerHash, bound, threads } = hashingLoad();
      expect(msPerHash).toBeGreaterThan(0);
      expect(bound).toBe(hashQueueBound({ hashQueue: null }, threads, msPerHash!));
      expect(await jobsOf(() => hashPassword("kept"))).toEqual(["kept"]);
    });
  });

  it("is measured by the first hashes when not at start, once for all of them", async () => {
    await withFreshQueues({ hashQueue: null }, async () => {
      const jobs = await jobsOf(() => Promise.all([hashPassword("first"), hashPassword("second")]));
      expect(jobs.slice(0, 4)).toEqual(["warm-up", "measure-0", "measure-1", "measure-2"]);
      expect(jobs.slice(4).sort()).toEqual(["first", "second"]);
      expect(hashingLoad().msPerHash).toBeGreaterThan(0);
    });
  });

  it("is not measured when HASH_QUEUE is set", async () => {
    await withFreshQueues({ hashQueue: 5 }, async () => {
      expect(await jobsOf(async () => {
        await measureHashingAtStart();
        await hashPassword("not measured");
      })).toEqual(["not measured"]);
      expect(hashingLoad()).toMatchObject({ msPerHash: null, bound: 5 });
    });
  });

  it("follows the time each hash then takes, by a twentieth of the difference", async () => {
    await hashPassword("measured"); // measured
    const slots = (globalThis as { __hashingSlots?: { msPerHash: number } }).__hashingSlots!;
    const kept = slots.msPerHash;
    try {
      slots.msPerHash = 1_000_000; // far above what any hash takes (one takes less than a minute)
      await hashPassword("one more");
      expect(slots.msPerHash).toBeGreaterThan(950_000);
      expect(slots.msPerHash).toBeLessThan(950_000 + 0.05 * 60_000);
    } finally {
      slots.msPerHash = kept;
    }
  });
});
