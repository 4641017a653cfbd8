// A user code is unique among the device authorizations not yet pruned (RFC 8628 6.1,
// docs/rules/tokens.md#device-flow): when the code drawn is taken, the endpoint draws again, at most five times.
// The draw (node:crypto's randomInt) is steered here so that it repeats a taken code; nothing else is replaced.
// Under Stryker the device modules are loaded before this file's mock (src/testing/stryker-preload.ts), so the
// steering cannot reach them: every Stryker run leaves this file out (vitest.config.ts; docs/testing.md#mutation-testing).
import { afterEach, describe, expect, it, vi } from "vitest";

const steer = vi.hoisted(() => ({ fixed: null as number[] | null, draws: 0 }));
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  const randomInt = ((...args: Parameters<typeof actual.randomInt>) => {
    steer.draws++;
    if (steer.fixed?.length) return steer.fixed.shift()!;
    return (actual.randomInt as (...a: unknown[]) => number)(...args);
  }) as typeof actual.randomInt;
  return { ...actual, default: { ...actual, randomInt }, randomInt };
});

const { call } = await import("@/testing/app");
const { makeClient, makeUser } = await import("@/testing/factories");

const DEVICE = "/api/connect/oauth2/device/";

afterEach(() => {
  steer.fixed = null;
  steer.draws = 0;
});

const ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
/** A code no earlier run of this file on the same database holds: eight random letters' indices. */
const someCode = () => Array.from({ length: 8 }, () => Math.floor(Math.random() * ALPHABET.length));
const shown = (indices: number[]) => indices.map((i) => ALPHABET[i]).join("").replace(/^(.{4})/, "$1-");

async function deviceClient() {
  const owner = await makeUser();
  return makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
}

describe("a user code that is already taken", () => {
  it("is drawn again: the second request gets another code", async () => {
    const client = await deviceClient();
    const code = someCode();
    steer.fixed = [...code];
    const first = await call("POST", DEVICE, { body: { client_id: client.client_id } });
    expect(first.json.user_code).toBe(shown(code));
    steer.fixed = [...code]; // the same code again, then a random one
    steer.draws = 0;
    const second = await call("POST", DEVICE, { body: { client_id: client.client_id } });
    expect(second.status).toBe(200);
    expect(second.json.user_code).not.toBe(shown(code));
    expect(steer.draws).toBe(16);
  });

  it("five taken codes in a row end the request (no endless drawing), and nothing is stored for it", async () => {
    const client = await deviceClient();
    const code = someCode();
    steer.fixed = [...code];
    expect((await call("POST", DEVICE, { body: { client_id: client.client_id } })).json.user_code).toBe(shown(code));
    steer.fixed = Array.from({ length: 6 }, () => code).flat();
    steer.draws = 0;
    const res = await call("POST", DEVICE, { body: { client_id: client.client_id } });
    expect(res.status).toBe(500);
    expect(steer.draws).toBe(8 * 5);
  });
});
