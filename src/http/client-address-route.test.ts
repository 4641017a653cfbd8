// docs/rules/endpoints.md#client-address: the client address is the socket's; X-Forwarded-For is believed only
// with TRUST_PROXY=1. The server in front of every handler appends the socket's address to X-Forwarded-For (as
// a proxy does), so the requests below carry the header as that server passes it on: whatever the client sent,
// then the peer. This checks the rule where every /api handler meets it: the client address that route() puts
// into the request context (src/http/request-context.ts), with the environment read afresh for each setting.
import { afterEach, describe, expect, it, vi } from "vitest";

const original = process.env.TRUST_PROXY;
afterEach(() => {
  if (original === undefined) delete process.env.TRUST_PROXY;
  else process.env.TRUST_PROXY = original;
  vi.resetModules();
});

/** A route() handler that answers the client address it was given, under TRUST_PROXY=`trustProxy`. */
async function addressSeenBy(trustProxy: "0" | "1" | undefined) {
  vi.resetModules();
  if (trustProxy === undefined) delete process.env.TRUST_PROXY;
  else process.env.TRUST_PROXY = trustProxy;
  const { route } = await import("@/http/route");
  const { requestContext } = await import("@/http/request-context");
  const handlers = route({ GET: async () => Response.json({ ip: requestContext()?.ip ?? null }) });
  return async (forwarded: string | null) => {
    const headers: Record<string, string> = forwarded === null ? {} : { "x-forwarded-for": forwarded };
    const response = await handlers.GET(new Request("http://localhost:3000/api/thing", { headers }), { params: Promise.resolve({}) });
    return ((await response.json()) as { ip: string | null }).ip;
  };
}

describe("the client address a handler sees", () => {
  it.each([undefined, "0"] as const)("without TRUST_PROXY (%s) is the peer, whatever the client put in X-Forwarded-For", async (setting) => {
    const seen = await addressSeenBy(setting);
    expect(await seen("6.6.6.6, 203.0.113.9")).toBe("203.0.113.9");
    expect(await seen("6.6.6.6, 198.51.100.4, 10.0.0.2")).toBe("10.0.0.2");
    expect(await seen("203.0.113.9")).toBe("203.0.113.9");
    expect(await seen(null)).toBe("unknown");
  });

  it("with TRUST_PROXY=1 is the entry our proxy appended, never one the client sent", async () => {
    const seen = await addressSeenBy("1");
    expect(await seen("6.6.6.6, 198.51.100.4, 10.0.0.2")).toBe("198.51.100.4");
    expect(await seen("198.51.100.4, 10.0.0.2")).toBe("198.51.100.4");
    expect(await seen("10.0.0.2")).toBe("10.0.0.2");
    expect(await seen(null)).toBe("unknown");
  });
});
