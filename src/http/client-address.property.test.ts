// clientAddressFromForwarded (src/http/client-address.ts) answers any header as the rule's plain reading does:
// split on commas, trim, drop empty entries, take the last (or with TRUST_PROXY the one before it). Its
// one-entry shortcut must change nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clientAddressFromForwarded } from "@/http/client-address";

function byTheRule(forwarded: string | null, trustProxy: boolean): string {
  const entries = (forwarded ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) return "unknown";
  const entry = entries[trustProxy && entries.length >= 2 ? entries.length - 2 : entries.length - 1]!;
  const plain = entry.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
  return /^[0-9a-f:.]{2,45}$/i.test(plain) ? plain.toLowerCase() : "unknown";
}

describe("client address of any X-Forwarded-For", () => {
  it("is what the rule's plain reading gives, with one entry or several", () => {
    const piece = fc.constantFrom("127.0.0.1", "::ffff:10.0.0.1", "FE80::1", " ", "\t", ",", "", "x", "1", ":", ".", "\u00a0", "<a>");
    const header = fc.option(fc.array(piece, { maxLength: 8 }).map((parts) => parts.join("")));
    fc.assert(
      fc.property(header, fc.boolean(), (forwarded, trustProxy) => {
        expect(clientAddressFromForwarded(forwarded, trustProxy)).toBe(byTheRule(forwarded, trustProxy));
      }),
      { numRuns: 5000 },
    );
  });
});
