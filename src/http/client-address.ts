// The client address of a request, for rate limits and the audit log (docs/rules/endpoints.md#client-address):
// the socket's address; `X-Forwarded-For` is believed only with TRUST_PROXY=1.
//
// The server in front of every handler (src/server/, `npm start`) makes the header trustworthy: it appends the
// socket's peer address to `X-Forwarded-For` on every request it passes on, as a proxy does. So the last entry
// is always the peer that connected to us. Without TRUST_PROXY that peer is the client. With TRUST_PROXY=1 the
// peer is our own proxy, and the client is the entry our proxy appended, the one before the last; anything
// further left was sent by the client and is never believed. Under `next dev` Next fills the header itself.
import { env } from "@/env";

export const UNKNOWN_ADDRESS = "unknown";

export function clientAddressFromForwarded(forwarded: string | null, trustProxy: boolean): string {
  // One entry (the peer, when the client sent no header of its own): the same answer without splitting.
  if (forwarded !== null && !forwarded.includes(",")) {
    const entry = forwarded.trim();
    return entry ? normalise(entry) : UNKNOWN_ADDRESS;
  }
  const entries = (forwarded ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) return UNKNOWN_ADDRESS;
  const index = trustProxy && entries.length >= 2 ? entries.length - 2 : entries.length - 1;
  return normalise(entries[index]!);
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client; anything that is not an address is refused as unknown. */
function normalise(address: string): string {
  const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
  return /^[0-9a-f:.]{2,45}$/i.test(plain) ? plain.toLowerCase() : UNKNOWN_ADDRESS;
}

export function clientAddress(request: Request): string {
  return clientAddressFromForwarded(request.headers.get("x-forwarded-for"), env().trustProxy);
}
