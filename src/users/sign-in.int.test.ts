import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { makeUser } from "@/testing/factories";
import { signInWithPassword } from "@/users/sign-in";

afterEach(() => resetClock());

describe("sign-in for the service's own pages", () => {
  it("accepts the right password, with the e-mail in any case", async () => {
    const user = await makeUser();
    const result = await signInWithPassword({ email: user.email.toUpperCase(), password: user.password });
    expect(result).toEqual({ ok: true, user: { id: user.id, name: user.name, email: user.email, sessionVersion: 0 } });
  });

  it("refuses a wrong password and an unknown e-mail alike", async () => {
    const user = await makeUser();
    expect(await signInWithPassword({ email: user.email, password: "wrong password" })).toEqual({ ok: false, reason: "invalid" });
    expect(await signInWithPassword({ email: "nobody@example.test", password: "whatever1" })).toEqual({ ok: false, reason: "invalid" });
  });

  it("is rate limited per e-mail like the password grant: after 10 failures even the right password waits 15 minutes", async () => {
    const user = await makeUser();
    for (let i = 0; i < 10; i++) await signInWithPassword({ email: user.email, password: `wrong ${i}` });
    expect(await signInWithPassword({ email: user.email, password: user.password })).toEqual({ ok: false, reason: "rate_limited" });
    advanceClock(15 * 60 * 1000 + 1000);
    expect((await signInWithPassword({ email: user.email, password: user.password })).ok).toBe(true);
  });
});
