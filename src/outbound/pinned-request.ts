// Requests the server sends to an address a client chose: a client ID metadata document
// (docs/rules/tokens.md#client-id-metadata-documents) and a logout token (docs/rules/openid-connect.md#back-channel-logout).
// The host is resolved here, every address it resolves to must be public (src/outbound/public-address.ts)
// unless the caller allows otherwise, and the connection is made to exactly the address that was checked (the
// request goes to that IP, with the name as Host and TLS server name), so that nothing can resolve the name
// again to another address between the check and the connection (DNS rebinding). An IP literal is checked the
// same way. Redirects are never followed: the caller sees the 3xx.
import { lookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { isPublicAddress } from "@/outbound/public-address";

/** Why a request was not sent: the host does not resolve, or resolves to an address that is not public. */
export class OutboundAddressError extends Error {
  override name = "OutboundAddressError";
}

export type CheckedAddress = { address: string; family: number };

const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

/** The one address to connect to, after every address of the host passed the check (skipped with `allowNonPublic`). */
export async function checkedAddress(url: URL, allowNonPublic: boolean): Promise<CheckedAddress> {
  const host = bareHost(url);
  let addresses: CheckedAddress[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new OutboundAddressError(`${url.host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw new OutboundAddressError(`${url.host} does not resolve`);
  if (!allowNonPublic) {
    for (const { address } of addresses) {
      if (!isPublicAddress(address)) throw new OutboundAddressError(`${url.host} resolves to a non-public address (${address})`);
    }
  }
  return addresses[0]!;
}

/** A request to `url` over a connection to `target` only (from checkedAddress), not yet ended. */
export function pinnedRequest(
  url: URL,
  target: CheckedAddress,
  options: { method: string; headers: Record<string, string>; signal: AbortSignal },
  onResponse: (response: http.IncomingMessage) => void,
): http.ClientRequest {
  const host = bareHost(url);
  const secure = url.protocol === "https:";
  const requestOptions: https.RequestOptions = {
    host: target.address,
    family: target.family,
    port: url.port || (secure ? 443 : 80),
    path: url.pathname + url.search,
    method: options.method,
    headers: { host: url.host, ...options.headers },
    agent: false,
    signal: options.signal,
    ...(isIP(host) ? {} : { servername: host }),
  };
  return (secure ? https : http).request(requestOptions, onResponse);
}
