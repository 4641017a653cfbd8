import { describe, expect, it } from "vitest";
import { clientAddressFromForwarded, UNKNOWN_ADDRESS } from "@/http/client-address";

describe("client address (CONTRACT.md 1)", () => {
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
});
