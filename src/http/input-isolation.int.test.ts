// One caller's input never fails another's request (README, Security): lookups gathered into one statement
// (src/server/fast-sql.ts pgLookup) and the input rule (src/http/input-text.ts). A client_id holding a NUL
// byte, which PostgreSQL text cannot hold (SQLSTATE 22021), sent beside legitimate requests in the same turn of
// the event loop: the legitimate ones are answered as if it were not there, the NUL one is a 400, and nothing
// is logged as an unexpected error.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setEnvForTests } from "@/env";
import { driver } from "@/server/db";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { captureLog } from "@/testing/log-capture";
import { Barrier, together } from "@/testing/race";

type Confidential = { client_id: string; client_secret: string };
let clients: Confidential[] = [];
let restoreEnv: (() => void) | null = null;

beforeAll(async () => {
  const owner = await makeUser();
  clients = [];
  for (let i = 0; i < 10; i++) {
    const client = await makeClient({ ownerId: owner.id, grantType: "client_credentials", redirectUris: [] });
    clients.push({ client_id: client.client_id, client_secret: client.client_secret! });
  }
});

afterEach(() => {
  restoreEnv?.();
  restoreEnv = null;
});

const form = (fields: Record<string, string>) => ({ raw: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

/**
 * Records, passing everything through unchanged, the keys of every statement the client lookup sends to
 * PostgreSQL while `fn` runs: the proof that lookups were gathered into one statement. Null on SQLite.
 */
async function clientStatements<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[][] | null }> {
  const d = await driver();
  if (d.kind !== "postgresql") return { result: await fn(), statements: null };
  const statements: string[][] = [];
  const pool = d.pool;
  const original = pool.query;
  pool.query = function (this: typeof pool, ...args: unknown[]) {
    const config = args[0] as { name?: string; values?: unknown[] } | undefined;
    if (config && typeof config === "object" && config.name === "fast-sql-client") statements.push([...(config.values![0] as string[])]);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pool.query;
  try {
    return { result: await fn(), statements };
  } finally {
    pool.query = original;
  }
}

describe("a client_id holding a NUL byte beside legitimate requests in the same turn", () => {
  it("fails only its own request (400 invalid_request); the ten legitimate token and ten revocation requests gathered with it are answered 200", async () => {
    const previous = setEnvForTests({ logLevel: "info" });
    restoreEnv = () => setEnvForTests(previous);
    const requests: Array<{ kind: "token" | "revoke"; legit: boolean; fields: Record<string, string> }> = [];
    for (const client of clients) {
      requests.push({ kind: "token", legit: true, fields: { grant_type: "client_credentials", scope: "readonly", ...client } });
      requests.push({ kind: "revoke", legit: true, fields: { token: `unknown-${client.client_id}`, ...client } });
    }
    for (let i = 0; i < 10; i++) {
      requests.push({ kind: "token", legit: false, fields: { grant_type: "client_credentials", scope: "readonly", client_id: `${clients[i]!.client_id}\u0000${i}`, client_secret: "x" } });
      requests.push({ kind: "revoke", legit: false, fields: { token: "t", client_id: `\u0000evil-${i}`, client_secret: "x" } });
    }
    const barrier = new Barrier(requests.length);
    const { lines, result } = await captureLog(() =>
      clientStatements(() =>
        together(
          barrier,
          requests.map((r) => call("POST", r.kind === "token" ? "/api/connect/oauth2/token/" : "/api/connect/oauth2/revoke/", { ...form(r.fields), heldBy: barrier })),
        ),
      ),
    );
    const responses = result.result;
    expect(barrier.arrived).toBe(requests.length); // every request had started reading its body when all went on

    const legit = responses.filter((_, i) => requests[i]!.legit);
    const hostile = responses.filter((_, i) => !requests[i]!.legit);
    const statuses = (list: typeof responses) => list.reduce<Record<number, number>>((count, r) => ({ ...count, [r.status]: (count[r.status] ?? 0) + 1 }), {});
    expect.soft(statuses(legit), JSON.stringify(legit.find((r) => r.status !== 200)?.text)).toEqual({ 200: 20 });
    expect.soft(statuses(hostile)).toEqual({ 400: 20 });
    for (const response of hostile) expect.soft(response.json).toEqual({ error: "invalid_request" });
    expect.soft(lines.filter((line) => line.level === "error").map((line) => String(line.message))).toEqual([]);

    if (result.statements) {
      // The legitimate lookups were gathered: one statement carried the ten client_ids (each asked for twice),
      // and no statement carried a key with a NUL byte.
      const all = clients.map((c) => c.client_id).sort();
      expect.soft(result.statements.some((keys) => all.every((id) => keys.includes(id))), JSON.stringify(result.statements)).toBe(true);
      expect(result.statements.flat().filter((key) => key.includes("\u0000"))).toEqual([]);
    }
  });
});
