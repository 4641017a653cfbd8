// Password hashing and its share of libuv's thread pool (src/users/passwords.ts).
import { describe, expect, it } from "vitest";
import { hashingSlots, hashPassword, verifyPassword } from "@/users/passwords";

describe("hashingSlots", () => {
  it("is one hash per core of the process's share, leaving two pool threads free", () => {
    expect(hashingSlots({ workers: 1, threadPoolSize: 4 }, 2)).toBe(2);
    expect(hashingSlots({ workers: 1, threadPoolSize: 4 }, 8)).toBe(2); // the pool, not the cores, limits
    expect(hashingSlots({ workers: 1, threadPoolSize: 10 }, 8)).toBe(8);
    expect(hashingSlots({ workers: 4, threadPoolSize: 4 }, 8)).toBe(2);
    expect(hashingSlots({ workers: 3, threadPoolSize: 4 }, 2)).toBe(1);
    expect(hashingSlots({ workers: 1, threadPoolSize: 1 }, 2)).toBe(1); // never none
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

  it("runs at most the process's slots at once; the rest wait their turn", async () => {
    const stored = await hashPassword("correct horse");
    const slots = (globalThis as { __hashingSlots?: { size: number; busy: number; waiting: unknown[] } }).__hashingSlots!;
    let mostBusy = 0;
    let mostWaiting = 0;
    let running = true;
    const watch = (async () => {
      while (running) {
        mostBusy = Math.max(mostBusy, slots.busy);
        mostWaiting = Math.max(mostWaiting, slots.waiting.length);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const results = await Promise.all(Array.from({ length: slots.size * 3 }, () => verifyPassword(stored, "correct horse")));
    running = false;
    await watch;
    expect(results.every(Boolean)).toBe(true);
    expect(mostBusy).toBe(slots.size);
    expect(mostWaiting).toBeGreaterThan(0);
  });
});
