// Which addresses the server sends requests to on a client's word (docs/rules/tokens.md#client-id-metadata-documents,
// docs/rules/openid-connect.md#back-channel-logout).
import { describe, expect, it } from "vitest";
import { isPublicAddress } from "@/outbound/public-address";

describe("isPublicAddress", () => {
  it.each(["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"])("accepts the public address %s", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "IPv6 loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local (cloud metadata)"],
    ["fe80::1", "IPv6 link-local"],
    ["fc00::1", "unique local"],
    ["fd12:3456::1", "unique local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["0.0.0.0", "unspecified"],
    ["::", "IPv6 unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["192.0.2.1", "documentation"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:10.1.2.3", "IPv4-mapped private"],
    ["not an address", "not an address"],
  ])("refuses %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});
