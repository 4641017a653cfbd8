// Web sign-ins from an address that the per-address sign-in limit refuses are answered before Next
// (src/server/front.ts, src/limits/refused-addresses.ts; docs/rules/accounts.md#limits): a flood from one
// address, each answered 429 by Next, kept the process's one thread busy and held a legitimate password grant
// back by hundreds of milliseconds. The test server stands in for Next with a 404 "not served without Next",
// so an answer other than that one was given by the front door.
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { addressKey } from "@/limits/limiter";
import { signInsRefusedUntil } from "@/limits/refused-addresses";
import { setEnvForTests } from "@/env";
import { frontHooks, REFUSED_SIGN_IN_DELAY_MS } from "@/server/front";
import { signInWithPassword, SIGNIN_LIMIT_PER_CLIENT_ADDRESS } from "@/users/sign-in";
import { startServer } from "@/testing/app";
import { makeUser } from "@/testing/factories";

const CALLBACK = "/api/auth/callback/credentials";
const freshAddress = () => `10.${randomBytes(3).join(".")}`;
const uniqueEmail = () => `flood-${randomBytes(6).toString("hex")}@example.test`;

let restore: Partial<ReturnType<typeof setEnvForTests>> | null = null;
/** The waits of refused sign-ins asked for (ms); each answered at once unless a test holds them. */
let delays: number[] = [];
let held: Array<() => void> | null = null;
afterEach(() => {
  if (restore) setEnvForTests(restore);
  restore = null;
  resetClock();
  delete frontHooks.delayRefusal;
  held = null;
});
function recordDelays(): void {
  delays = [];
  frontHooks.delayRefusal = (ms) => {
    delays.push(ms);
    return held === null ? Promise.resolve() : new Promise<void>((resolve) => held!.push(resolve));
  };
}

/** Makes `address` one the limiter refuses (its failures at the per-address limit, then one refusal). */
async function refuse(address: string): Promise<void> {
  for (let i = 0; i < SIGNIN_LIMIT_PER_CLIENT_ADDRESS.max; i++) {
    expect(await signInWithPassword({ email: uniqueEmail(), password: "guess", ip: address })).toEqual({ ok: false, reason: "invalid" });
  }
  expect(await signInWithPassword({ email: uniqueEmail(), password: "guess", ip: address })).toMatchObject({ ok: false, reason: "rate_limited" });
}

/** A sign-in posted as the sign-in page's fetch (json=true) or as a plain form, from `address` (X-Forwarded-For). */
const post = (url: string, address: string, json: boolean) =>
  fetch(`${url}${CALLBACK}`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": address },
    body: new URLSearchParams({ csrfToken: "x", email: uniqueEmail(), password: "guess", ...(json ? { json: "true" } : {}) }).toString(),
  });

describe("web sign-ins from an address the sign-in limit refuses", () => {
  it("are answered 429 (the page's fetch) or redirected to the error (a plain form) before Next, until the address has room again; other addresses go on to Next", async () => {
    restore = setEnvForTests({ trustProxy: true });
    recordDelays();
    const attacker = freshAddress();
    const server = await startServer();
    try {
      // Not refused yet: the request goes on to Next (here the stand-in).
      expect((await post(server.url, attacker, true)).status).toBe(404);
      // The limiter refuses the address once; from then on the front door answers for it.
      await refuse(attacker);
      const fetched = await post(server.url, attacker, true);
      expect(fetched.status).toBe(429);
      expect(Number(fetched.headers.get("retry-after"))).toBeGreaterThan(800);
      expect(await fetched.json()).toEqual({ url: "http://localhost:3000/api/auth/error?error=rate_limited" });
      const form = await post(server.url, attacker, false);
      expect({ status: form.status, location: form.headers.get("location") }).toEqual({ status: 302, location: "http://localhost:3000/api/auth/error?error=rate_limited" });
      // Each waited the full delay first (the address has room only in about 15 minutes).
      expect(delays).toEqual([REFUSED_SIGN_IN_DELAY_MS, REFUSED_SIGN_IN_DELAY_MS]);
      // Another address is not affected; nor is this one once its oldest failure has left the window.
      expect((await post(server.url, freshAddress(), true)).status).toBe(404);
      advanceClock(15 * 60 * 1000 + 1000);
      expect((await post(server.url, attacker, true)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it("are answered only once their wait is over, and a wait is never longer than the time until the address has room", async () => {
    restore = setEnvForTests({ trustProxy: true });
    recordDelays();
    held = [];
    const attacker = freshAddress();
    const server = await startServer();
    try {
      await refuse(attacker);
      let answered = false;
      const answer = post(server.url, attacker, true).then((response) => {
        answered = true;
        return response;
      });
      while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
      // The request is at its wait: nothing has been written to it.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(answered).toBe(false);
      held.shift()!();
      expect((await answer).status).toBe(429);
      // 300 ms before the address has room, the wait is those 300 ms.
      held = null;
      advanceClock(signInsRefusedUntil(addressKey(attacker), nowMs())! - nowMs() - 300);
      const late = await post(server.url, attacker, true);
      expect(late.status).toBe(429);
      expect(delays[1]).toBeGreaterThan(0);
      expect(delays[1]).toBeLessThanOrEqual(300);
    } finally {
      await server.close();
    }
  });

  it("a refusal for the e-mail alone (not the address) does not stop the address's other sign-ins", async () => {
    restore = setEnvForTests({ trustProxy: true });
    const user = await makeUser();
    const address = freshAddress();
    const server = await startServer();
    try {
      for (let i = 0; i < 10; i++) await signInWithPassword({ email: user.email, password: "guess", ip: address });
      expect(await signInWithPassword({ email: user.email, password: user.password, ip: address })).toMatchObject({ ok: false, reason: "rate_limited" });
      expect((await post(server.url, address, true)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
