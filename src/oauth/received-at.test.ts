// The signed time an authorization request was received (`auth_after`, docs/rules/tokens.md#front-channel;
// src/oauth/authorization-request.ts): bound to the request's parameters whatever their order, refused when
// altered, malformed, older than ten minutes or more than a minute ahead of this server's clock; and the
// server's MACs derived from AUTH_SECRET the same way by every version, so that a consent page or a sign-in
// opened before an upgrade still works after it.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { env, setEnvForTests } from "@/env";
import { consentCsrfToken, signReceivedAt, verifiedReceivedAt } from "@/oauth/authorization-request";

const T = 1_800_000_000; // seconds since the epoch: the clock's time in these tests
const TEN_MINUTES_MS = 10 * 60 * 1000;

const request = () =>
  new URLSearchParams([
    ["response_type", "code"],
    ["client_id", "client-1"],
    ["redirect_uri", "https://client.example.test/callback"],
    ["scope", "openid readonly"],
    ["prompt", "login"],
    ["resource", "https://a.example"],
    ["resource", "https://b.example"],
    ["state", "s"],
  ]);
const withAuthAfter = (query: URLSearchParams, ...values: string[]) =>
  new URLSearchParams([...query, ...values.map((value): [string, string] => ["auth_after", value])]);

const originalSecret = env().authSecret;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T * 1000);
});
afterEach(() => {
  vi.useRealTimers();
  setEnvForTests({ authSecret: originalSecret });
});

describe("auth_after", () => {
  it("is accepted for the same parameters in any order, repeated values included, and beside a client_secret", () => {
    const signed = signReceivedAt(T, request());
    expect(verifiedReceivedAt(withAuthAfter(request(), signed))).toBe(T);
    expect(verifiedReceivedAt(withAuthAfter(new URLSearchParams([...request()].reverse()), signed))).toBe(T);
    const swapped = [...request()].map(([name, value]): [string, string] =>
      name !== "resource" ? [name, value] : [name, value === "https://a.example" ? "https://b.example" : "https://a.example"],
    );
    expect(verifiedReceivedAt(withAuthAfter(new URLSearchParams(swapped), signed))).toBe(T);
    expect(verifiedReceivedAt(new URLSearchParams([["client_secret", "x"], ...withAuthAfter(request(), signed)]))).toBe(T);
  });

  it("is refused for other parameters: one changed, dropped or added", () => {
    const signed = signReceivedAt(T, request());
    const changed = new URLSearchParams(request());
    changed.set("scope", "openid readwrite");
    const dropped = new URLSearchParams(request());
    dropped.delete("prompt");
    const added = new URLSearchParams([...request(), ["max_age", "0"]]);
    for (const query of [changed, dropped, added]) expect(verifiedReceivedAt(withAuthAfter(query, signed))).toBeNull();
  });

  it("is refused when absent, repeated, or not exactly <seconds>.<signature>", () => {
    const signed = signReceivedAt(T, request());
    expect(verifiedReceivedAt(request())).toBeNull();
    expect(verifiedReceivedAt(withAuthAfter(request(), signed, signed))).toBeNull();
    for (const value of [`x${signed}`, `${signed}x`, `${signed}.x`, ` ${signed}`, signed.replace(".", "-"), signed.slice(0, -1)]) {
      expect(verifiedReceivedAt(withAuthAfter(request(), value))).toBeNull();
    }
    const thirteenDigits = signReceivedAt(1_000_000_000_000, request());
    vi.setSystemTime(1_000_000_000_000 * 1000);
    expect(verifiedReceivedAt(withAuthAfter(request(), thirteenDigits))).toBeNull();
  });

  it("lives ten minutes from the time it names", () => {
    const signed = signReceivedAt(T, request());
    vi.setSystemTime(T * 1000 + TEN_MINUTES_MS - 1);
    expect(verifiedReceivedAt(withAuthAfter(request(), signed))).toBe(T);
    vi.setSystemTime(T * 1000 + TEN_MINUTES_MS);
    expect(verifiedReceivedAt(withAuthAfter(request(), signed))).toBeNull();
  });

  it("may name a time up to a minute ahead of this server's clock (another instance's), not more", () => {
    expect(verifiedReceivedAt(withAuthAfter(request(), signReceivedAt(T + 60, request())))).toBe(T + 60);
    expect(verifiedReceivedAt(withAuthAfter(request(), signReceivedAt(T + 61, request())))).toBeNull();
  });
});

describe("the MACs' keys", () => {
  it("derive from AUTH_SECRET as every earlier version derived them", () => {
    setEnvForTests({ authSecret: "a-fixed-secret-for-known-answers-0123456789" });
    expect(consentCsrfToken(7, "sealed-request")).toBe(KNOWN.csrf);
    expect(signReceivedAt(T, request())).toBe(KNOWN.receivedAt);
  });
});

// Computed apart from this code (Python's hmac and hashlib): key = HKDF-SHA256(AUTH_SECRET, salt empty, info
// "oauth-authorization-request", 32 bytes); a purpose's key = HMAC-SHA256(key, purpose); the MAC =
// base64url(HMAC-SHA256(purpose key, data)), with data "<user id>:<sealed>" for "csrf" and
// "<seconds>:<JSON of the parameters' [name, value] pairs, sorted>" for "received-at".
const KNOWN = {
  csrf: "c1rULCLg7PMqXBwyTlT4P9tj5aDpg6_EIrAwGqF2Jek",
  receivedAt: "1800000000.XQ9eLzISKiVBnltWinhTWopoEvzdzRYYh9JW9tStcIc",
};
