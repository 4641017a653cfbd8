// Which addresses the server may send a request to on a client's word: a client ID metadata document
// (docs/rules/tokens.md#client-id-metadata-documents) and a logout token (docs/rules/openid-connect.md#back-channel-logout):
// public unicast only. Loopback, private (10/8, 172.16/12, 192.168/16), link-local (169.254/16, fe80::/10),
// unique local (fc00::/7), carrier-grade NAT, multicast, unspecified, documentation, benchmarking and every
// other special-purpose range are refused; an IPv4-mapped IPv6 address is judged as the IPv4 address it
// carries. The classification is ipaddr.js's (its "unicast" range is what no special-purpose block claims).
import ipaddr from "ipaddr.js";

/** Whether `address` (an IP address as text, IPv6 without brackets) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === "unicast";
}
