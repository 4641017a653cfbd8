// Every security event in words, and client addresses as people read them (docs/rules/pages.md#security-activity).
import { describe, expect, it } from "vitest";
import { describeEvent, readableAddress } from "@/audit/describe-event";
import { AUDIT_EVENT_TYPES } from "@/audit/events";

describe("security events in words", () => {
  it("has words for every event type, none shown as its bare name", () => {
    for (const type of AUDIT_EVENT_TYPES) {
      const words = describeEvent({ type, appName: "Photo Printer", detail: {} });
      expect(words, type).not.toContain(type);
      expect(words, type).toMatch(/\.$/);
    }
  });

  it("says how an address was confirmed, and what a password reset did", () => {
    expect(describeEvent({ type: "account.confirmed", appName: null, detail: { via: "link" } })).toBe("You confirmed your e-mail address.");
    expect(describeEvent({ type: "account.confirmed", appName: null, detail: { via: "password reset" } })).toBe("You confirmed your e-mail address by resetting your password.");
    expect(describeEvent({ type: "password.reset", appName: null, detail: {} })).toMatch(/^Your password was changed with a reset link/);
  });

  it("writes client addresses readably", () => {
    expect(readableAddress("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(readableAddress("203.0.113.9")).toBe("203.0.113.9");
    expect(readableAddress("2001:db8::1")).toBe("2001:db8::1");
    expect(readableAddress("::1")).toBe("this computer (::1)");
    expect(readableAddress("::ffff:127.0.0.1")).toBe("this computer (127.0.0.1)");
  });
});
