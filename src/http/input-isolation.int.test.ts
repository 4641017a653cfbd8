// One caller's input never fails another's request (docs/rules/endpoints.md#shared-work): lookups gathered
// into one statement (src/db/fast-sql.ts pgLookup) and the input rule (src/http/input-text.ts). A
// client_id holding a NUL byte, which PostgreSQL text cannot hold (SQLSTATE 22021), sent beside legitimate
// requests in the same turn of the event loop: the legitimate ones are answered as if it were not there, the
// NUL one is a 400, and nothing is logged as an unexpected error.
import pg from "pg";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setEnvForTests } from "@/env";
import { db, driver } from "@/db/client";
import { advanceClock, now, resetClock } from "@/clock";
import { mintTokens, startGrant } from "@/oauth/tokens";
import { digest } from "@/secrets";
import { clientByClientId, rotateRefreshToken, settleLookups, type PendingLookup, type RotationPlan } from "@/db/fast-sql";
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
  resetClock();
  restoreEnv?.();
  restoreEnv = null;
});

const form = (fields: Record<string, string>) => ({ raw: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

/**
 * Records, passing everything through unchanged, the keys of every statement the client lookup sends to
 * PostgreSQL while `fn` runs: the proof that lookups were gathered into one statement. Null on SQLite.
 */
async function clientStatements<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[][] | null }> {
  return recordStatements("fast-sql-client", fn);
}

async function recordStatements<T>(statementName: string, fn: () => Promise<T>): Promise<{ result: T; statements: string[][] | null }> {
  const d = await driver();
  if (d.kind !== "postgresql") return { result: await fn(), statements: null };
  const statements: string[][] = [];
  const pool = d.pool;
  const original = pool.query;
  pool.query = function (this: typeof pool, ...args: unknown[]) {
    const config = args[0] as { name?: string; values?: unknown[] } | undefined;
    if (config && typeof config === "object" && config.name === statementName) statements.push([...(config.values![0] as string[])]);
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

describe("the client lookup gathered into one statement on PostgreSQL (src/db/fast-sql.ts)", () => {
  it("answers a key holding a NUL byte 'not found' without sending it, and the keys asked for beside it as usual, in one statement", async () => {
    const [a, b] = [clients[0]!.client_id, clients[1]!.client_id];
    const { result, statements } = await recordStatements("fast-sql-client", () =>
      Promise.all([clientByClientId(a), clientByClientId(`${a}\u0000`), clientByClientId(b), clientByClientId("\u0000"), clientByClientId(a)]),
    );
    expect(result.map((row) => row?.clientId ?? null)).toEqual([a, null, b, null, a]);
    if (statements) expect(statements).toEqual([[a, b]]);
  });

  it("retries a batch whose statement failed one key at a time: only the callers of the refused key get the error", async () => {
    const d = await driver();
    if (d.kind !== "postgresql") return; // no batches on SQLite (each lookup is its own synchronous statement)
    const [a, b] = [clients[2]!.client_id, clients[3]!.client_id];
    const settled: Array<string | null> = [];
    const errors: unknown[] = [];
    const lookup = (key: string, i: number): PendingLookup<Record<string, unknown>> => ({
      key,
      resolve: (row) => (settled[i] = row ? String(row.clientId) : null),
      reject: (error) => {
        settled[i] = "rejected";
        errors.push(error);
      },
    });
    // A batch that holds a key pgLookup itself would have kept out (the same failure as any key the database
    // cannot take): the one statement for all fails, then each key goes alone.
    const batch = [lookup(a, 0), lookup("bad\u0000key", 1), lookup(b, 2), lookup("unknown", 3), lookup("bad\u0000key", 4)];
    const { statements } = await recordStatements("fast-sql-client", () => settleLookups(d.pool, "client", "clientId", batch));
    expect(settled).toEqual([a, "rejected", b, null, "rejected"]);
    expect(errors.map((error) => (error as { code?: string }).code)).toEqual(["22021", "22021"]);
    expect(statements).toEqual([[a, "bad\u0000key", b, "unknown"], [a], ["bad\u0000key"], [b], ["unknown"]]);
  });

  it("does not retry when the database cannot answer: that failure is every caller's", async () => {
    // A real pool whose server refuses connections (nothing listens on port 1): ECONNREFUSED.
    const unreachable = new pg.Pool({ connectionString: "postgresql://app:app@127.0.0.1:1/none", connectionTimeoutMillis: 2000 });
    let statements = 0;
    const query = unreachable.query.bind(unreachable) as (...args: unknown[]) => Promise<unknown>;
    unreachable.query = ((...args: unknown[]) => (statements++, query(...args))) as typeof unreachable.query;
    const outcomes: unknown[] = [];
    const batch = ["x", "y", "z"].map((key) => ({ key, resolve: () => outcomes.push("resolved"), reject: (error: unknown) => outcomes.push((error as { code?: string }).code) }));
    try {
      await settleLookups(unreachable, "client", "clientId", batch);
    } finally {
      await unreachable.end();
    }
    expect(statements).toBe(1);
    expect(outcomes).toEqual(["ECONNREFUSED", "ECONNREFUSED", "ECONNREFUSED"]);
  });
});

describe("refresh rotations asked for together (one SQLite transaction, a savepoint each; on PostgreSQL one statement each)", () => {
  it("one whose statement the database refuses (a token digest already taken) fails alone, and writes nothing; the others commit", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "password" });
    const clientRow = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    const grants: Array<{ record: Awaited<ReturnType<typeof startGrant>>; grantId: number }> = [];
    for (let i = 0; i < 3; i++) {
      const record = await startGrant({ clientId: clientRow.id, publicClientId: clientRow.clientId, userId: owner.id, grantType: "password", scopes: ["readonly"], withRefreshToken: true });
      const row = await (await db()).accessToken.findUniqueOrThrow({ where: { digest: digest(record.access_token) } });
      grants.push({ record, grantId: row.grantId });
    }
    const taken = digest(grants[0]!.record.access_token); // an access token's digest that exists already
    const planFor = (grant: (typeof grants)[number], clash: boolean) => (): RotationPlan => {
      const minted = mintTokens({ grantId: grant.grantId, clientId: clientRow.id, userId: owner.id, scopes: ["readonly"], refreshScopes: ["readonly"] });
      return { at: now(), access: clash ? { ...minted.access, digest: taken } : minted.access, refresh: minted.refresh!, audit: null };
    };
    const lastUsedBefore = (await (await db()).grant.findUniqueOrThrow({ where: { id: grants[1]!.grantId } })).lastUsedAt;
    advanceClock(1000);
    const outcomes = await Promise.allSettled(grants.map((grant, i) => rotateRefreshToken(digest(grant.record.refresh_token!), planFor(grant, i === 1))));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const counts = await Promise.all(grants.map(async (grant) => (await db()).accessToken.count({ where: { grantId: grant.grantId } })));
    expect(counts).toEqual([2, 1, 2]);
    const refused = await (await db()).refreshToken.findUniqueOrThrow({ where: { digest: digest(grants[1]!.record.refresh_token!) } });
    expect(refused.usedAt).toBeNull(); // its claim was undone with it: the token can still be used
    expect((await (await db()).grant.findUniqueOrThrow({ where: { id: grants[1]!.grantId } })).lastUsedAt).toEqual(lastUsedBefore);
  });
});

describe("a value the database refuses (src/db/errors.ts)", () => {
  it("is a 400 invalid_request / a short sentence, logged as a warning without a stack, never a 500", async () => {
    const d = await driver();
    if (d.kind !== "postgresql") return; // SQLite text holds U+0000
    const refused = await (await db()).client.findUnique({ where: { clientId: "a\u0000b" } }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).not.toBeNull();
    const { errorResponse, DATABASE_INPUT_MESSAGE } = await import("@/http/route");
    const previous = setEnvForTests({ logLevel: "info" });
    restoreEnv = () => setEnvForTests(previous);
    const request = new Request("http://localhost:3000/api/bundle/");
    const { lines, result } = await captureLog(async () => [errorResponse(refused, request, "oauth"), errorResponse(refused, request, "api")]);
    expect(result.map((r) => r.status)).toEqual([400, 400]);
    expect(await result[0]!.json()).toEqual({ error: "invalid_request" });
    expect(await result[1]!.json()).toEqual({ error: DATABASE_INPUT_MESSAGE });
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ["warn", "database refused a value"],
      ["warn", "database refused a value"],
    ]);
    expect(JSON.stringify(lines)).not.toContain("    at ");
  });
});
