import { describe, expect, it } from "vitest";
import { clientAddressFromForwarded, UNKNOWN_ADDRESS } from "@/http/client-address";

describe("client address", () => {
  it("is the peer the server appended last, whatever the client put before it, without TRUST_PROXY", () => {
    expect(clientAddressFromForwarded("6.6.6.6, 203.0.113.9", false)).toBe("203.0.113.9");
    expect(clientAddressFromForwarded("203.0.113.9", false)).toBe("203.0.113.9");
  });

  it("is the entry our proxy appended (the one before the last) with TRUST_PROXY=1", () => {
    expect(clientAddressFromForwarded("6.6.6.6, 198.51.100.4, 10.0.0.2", true)).toBe("198.51.100.4");
    expect(clientAddressFromForwarded("10.0.0.2", true)).toBe("10.0.0.2");
  });

  it("treats IPv4-mapped IPv6 as the IPv4 address and garbage as unknown", () => {
    expect(clientAddressFromForwarded("::ffff:127.0.0.1", false)).toBe("127.0.0.1");
    expect(clientAddressFromForwarded("<script>", false)).toBe(UNKNOWN_ADDRESS);
    expect(clientAddressFromForwarded(null, false)).toBe(UNKNOWN_ADDRESS);
    expect(clientAddressFromForwarded(" , ", true)).toBe(UNKNOWN_ADDRESS);
  });

  it("unwraps only a whole IPv4-mapped address, with octets of any length, and lower-cases IPv6", () => {
    expect(clientAddressFromForwarded("::ffff:10.20.30.40", false)).toBe("10.20.30.40");
    expect(clientAddressFromForwarded("::FFFF:192.168.100.200", false)).toBe("192.168.100.200");
    expect(clientAddressFromForwarded("1::ffff:10.0.0.1", false)).toBe("1::ffff:10.0.0.1");
    expect(clientAddressFromForwarded("::ffff:1.2.3.4.5", false)).toBe("::ffff:1.2.3.4.5");
    expect(clientAddressFromForwarded("FE80::1", false)).toBe("fe80::1");
  });

  it("refuses an entry with anything but address characters, before or after them", () => {
    for (const entry of ["zz1.2.3.4", "1.2.3.4zz", "1.2.3.4 5", "unknown", "1", "a".repeat(46)]) {
      expect(clientAddressFromForwarded(entry, false), entry).toBe(UNKNOWN_ADDRESS);
    }
    expect(UNKNOWN_ADDRESS).toBe("unknown");
    expect(clientAddressFromForwarded("a".repeat(45), false)).toBe("a".repeat(45));
  });

  it("with TRUST_PROXY=1 and exactly two entries, believes the first (our proxy's)", () => {
    expect(clientAddressFromForwarded("198.51.100.4, 10.0.0.2", true)).toBe("198.51.100.4");
  });
});
