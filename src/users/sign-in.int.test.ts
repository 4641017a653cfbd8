// Password sign-in for the service's own pages (next-auth's credentials provider calls signInWithPassword):
// the rate limits of docs/rules/accounts.md#limits and the audit events of docs/rules/operations.md#audit-log.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { db } from "@/db/client";
import { makeUser } from "@/testing/factories";
import { signInWithPassword } from "@/users/sign-in";

afterEach(() => resetClock());

const A = "203.0.113.10";
const B = "198.51.100.20";
const FIFTEEN_MINUTES = 15 * 60 * 1000;

const events = async (userId: number) =>
  (await (await db()).auditEvent.findMany({ where: { userId }, orderBy: { id: "asc" } })).map((event) => ({
    type: event.type,
    ip: event.ip,
    detail: event.detail ? (JSON.parse(event.detail) as Record<string, unknown>) : null,
  }));

describe("sign-in for the service's own pages", () => {
  it("accepts the right password, with the e-mail in any case", async () => {
    const user = await makeUser();
    const result = await signInWithPassword({ email: user.email.toUpperCase(), password: user.password, ip: A });
    expect(result).toEqual({ ok: true, user: { id: user.id, name: user.name, email: user.email, sessionVersion: 0 } });
  });

  it("refuses a wrong password and an unknown e-mail alike", async () => {
    const user = await makeUser();
    expect(await signInWithPassword({ email: user.email, password: "wrong password", ip: A })).toEqual({ ok: false, reason: "invalid" });
    expect(await signInWithPassword({ email: "nobody@example.test", password: "whatever1", ip: A })).toEqual({ ok: false, reason: "invalid" });
  });

  it("after 10 failures for one e-mail from one address, refuses that address even the right password for 15 minutes", async () => {
    const user = await makeUser();
    for (let i = 0; i < 10; i++) expect((await signInWithPassword({ email: user.email, password: `wrong ${i}`, ip: A })).ok).toBe(false);
    const refused = await signInWithPassword({ email: user.email, password: user.password, ip: A });
    // How long until the oldest counted failure leaves the window: all of it, as they were just now.
    expect(refused).toEqual({ ok: false, reason: "rate_limited", retryAfterSeconds: expect.any(Number) });
    expect(refused.ok === false && refused.reason === "rate_limited" && refused.retryAfterSeconds).toBeGreaterThan(FIFTEEN_MINUTES / 1000 - 60);
    advanceClock(FIFTEEN_MINUTES + 1000);
    expect((await signInWithPassword({ email: user.email, password: user.password, ip: A })).ok).toBe(true);
  });

  it("does not lock the owner out from another address when someone fails 10 times from theirs", async () => {
    const user = await makeUser();
    for (let i = 0; i < 12; i++) await signInWithPassword({ email: user.email, password: `attacker ${i}`, ip: A });
    expect(await signInWithPassword({ email: user.email, password: user.password, ip: A })).toMatchObject({ ok: false, reason: "rate_limited" });
    expect(await signInWithPassword({ email: user.email, password: user.password, ip: B })).toMatchObject({ ok: true, user: { id: user.id } });
  });

  it("after 50 failures for one e-mail across any addresses, refuses every address for 15 minutes; other e-mails are not affected", async () => {
    const [user, other] = [await makeUser(), await makeUser()];
    // Ten addresses, five each: no address comes near its own limit of ten.
    for (let i = 0; i < 50; i++) await signInWithPassword({ email: user.email, password: `spray ${i}`, ip: `192.0.2.${i % 10}` });
    for (const ip of [A, B, "2001:db8::1"]) {
      expect(await signInWithPassword({ email: user.email, password: user.password, ip })).toMatchObject({ ok: false, reason: "rate_limited" });
    }
    expect(await signInWithPassword({ email: other.email, password: other.password, ip: "192.0.2.1" })).toMatchObject({ ok: true, user: { id: other.id } });
    advanceClock(FIFTEEN_MINUTES + 1000);
    expect((await signInWithPassword({ email: user.email, password: user.password, ip: B })).ok).toBe(true);
  });

  it("records signin.succeeded, signin.failed and rate_limited with the client address", async () => {
    const user = await makeUser();
    await signInWithPassword({ email: user.email, password: user.password, ip: A });
    for (let i = 0; i < 10; i++) await signInWithPassword({ email: user.email, password: `wrong ${i}`, ip: B });
    await signInWithPassword({ email: user.email, password: user.password, ip: B });
    const recorded = await events(user.id);
    expect(recorded[0]).toEqual({ type: "signin.succeeded", ip: A, detail: null });
    expect(recorded.slice(1, 11)).toEqual(Array.from({ length: 10 }, () => ({ type: "signin.failed", ip: B, detail: { reason: "wrong password" } })));
    expect(recorded[11]).toEqual({ type: "rate_limited", ip: B, detail: { limit: "signin" } });
    expect(recorded).toHaveLength(12);
  });
});
