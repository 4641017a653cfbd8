// Registered clients' rows kept under the token cache's lease on PostgreSQL (src/db/pg-token-cache.ts,
// docs/design.md#the-data-layer): a token request whose client was read moments ago asks the database nothing
// for it, and a client changed or deleted on any instance is in every instance's answer to the next request.
// The cross-instance rule runs on both databases (on SQLite each request reads the client, and the rule holds
// trivially); what the cache itself does, on PostgreSQL only.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { db, driver } from "@/db/client";
import { clientByClientId, fastSqlHooks } from "@/db/fast-sql";
import type { Client } from "@/generated/sqlite/client";
import { clientCacheHits } from "@/observability/metrics";
import { env } from "@/env";
import { rotateClientSecret } from "@/clients/manage-clients";
import { makeClient, makeUser } from "@/testing/factories";
import { startInstance, type Instance } from "@/testing/instance";
import { until } from "@/testing/until";
import { PgTokenCache } from "@/db/pg-token-cache";

const onPostgres = env().database.kind === "postgresql";
const TOKEN = "/api/connect/oauth2/token/";
const REGISTER = "/api/connect/oauth2/register/";
const REVOKE = "/api/connect/oauth2/revoke/";
const METRICS_TOKEN = "metrics-token-for-the-client-cache-test";

afterEach(() => {
  fastSqlHooks.onPgStatement = undefined;
});

async function pgCache(): Promise<PgTokenCache> {
  const d = await driver();
  if (d.kind !== "postgresql" || !d.tokenCache) throw new Error("no PostgreSQL token cache");
  return d.tokenCache;
}

describe.skipIf(!onPostgres)("the client rows of the token cache (src/db/pg-token-cache.ts)", () => {
  it("a client read moments ago is answered without a statement, a copy for each caller", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "client_credentials", redirectUris: [] });
    const cache = await pgCache();
    const statements: string[] = [];
    fastSqlHooks.onPgStatement = (name) => statements.push(name);
    expect((await clientByClientId(client.client_id))?.clientId).toBe(client.client_id);
    expect(statements).toEqual(["client"]);
    // Two look-ups at a moment when the lease holds (a commit of another test file can empty the cache: then
    // they read again and are tried once more): both hits, no statement.
    let pair: Array<Promise<Client | null>> = [];
    await until(() => {
      statements.length = 0;
      const hits = clientCacheHits.count;
      pair = [clientByClientId(client.client_id), clientByClientId(client.client_id)];
      return clientCacheHits.count === hits + 2;
    }, () => "two look-ups answered from the cache");
    const [first, second] = await Promise.all(pair);
    await new Promise((resolve) => setImmediate(resolve));
    expect(statements).toEqual([]);
    expect(first).toEqual(second);
    expect(first?.clientId).toBe(client.client_id);
    first!.name = "Changed by one caller";
    expect(second!.name).toBe("Test client");
    expect(cache.getClient(client.client_id)?.name ?? "Test client").toBe("Test client");
  });

  it("refuses a fill by a look-up that began before an invalidation arrived, and never keeps a metadata document's row", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "client_credentials", redirectUris: [] });
    const id = client.client_id;
    const cache = await pgCache();
    const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: id } });
    await until(() => (cache.getClient(id), cache.fresh), () => "a fresh lease");
    const before = cache.generation; // a look-up starts here and reads the row...
    await rotateClientSecret({ ownerId: owner.id, clientId: id });
    await until(() => cache.generation !== before, () => "the invalidation applied");
    cache.putClient(row, before); // ...and fills after the invalidation arrived
    cache.putClient({ ...row, clientId: `${id}-document`, metadataDocumentExpiresAt: new Date() }, cache.generation);
    expect(await answer(cache, id)).toBeUndefined();
    expect(await answer(cache, `${id}-document`)).toBeUndefined();
    // A look-up that began after it fills it (put again when a commit of another test file empties it meanwhile).
    await until(() => {
      if (cache.fresh && cache.getClient(id)?.secretDigest === row.secretDigest) return true;
      cache.putClient(row, cache.generation);
      return false;
    }, () => "a fill by a look-up that began after the invalidation, answered");
  });

  it("keeps at most its size, the oldest dropped first", async () => {
    const owner = await makeUser();
    const clients: Client[] = [];
    for (let i = 0; i < 3; i++) {
      const made = await makeClient({ ownerId: owner.id, grantType: "client_credentials", redirectUris: [] });
      clients.push(await (await db()).client.findUniqueOrThrow({ where: { clientId: made.client_id } }));
    }
    const cache = new PgTokenCache((env().database as { url: string }).url, 2, 5_000); // an instance of its own
    try {
      await until(() => {
        for (const client of clients) cache.putClient(client, cache.generation);
        const kept = [cache.getClient(clients[1]!.clientId), cache.getClient(clients[2]!.clientId)]; // (starts the heartbeats)
        return cache.fresh && kept.every((row) => row !== undefined);
      }, () => "the last two kept under a fresh lease");
      expect(await answer(cache, clients[0]!.clientId)).toBeUndefined();
    } finally {
      await cache.close();
    }
  });
});

/** What `cache` answers for `clientId` at a moment when it may answer at all (fresh before and after). */
async function answer(cache: PgTokenCache, clientId: string): Promise<Readonly<Client> | undefined> {
  let result: Readonly<Client> | undefined;
  await until(() => {
    if (!cache.fresh) return (cache.getClient(clientId), false);
    result = cache.getClient(clientId);
    return cache.fresh;
  }, () => "a moment when the cache may answer");
  return result;
}

describe("a client changed on one instance, used on another", () => {
  let instances: Instance[] = [];
  beforeAll(async () => {
    instances = await Promise.all([
      startInstance({ env: { METRICS_TOKEN } }),
      startInstance({ env: { METRICS_TOKEN, REGISTRATION: "open" } }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
  });

  async function post(instance: Instance, path: string, body: Record<string, string>) {
    const response = await fetch(`${instance.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: (text === "" ? {} : JSON.parse(text)) as Record<string, unknown> };
  }

  async function clientCacheHits(instance: Instance): Promise<number> {
    const text = await (await fetch(`${instance.url}/api/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    return Number(/^client_cache_hits_total (\d+)$/m.exec(text)?.[1]);
  }

  /** Sends `request` to `instance` until the instance answers its client from the cache (PostgreSQL; at most 10 s). */
  async function cachedAt(instance: Instance, request: () => Promise<{ status: number }>) {
    const before = await clientCacheHits(instance);
    const started = Date.now();
    do {
      expect((await request()).status).toBe(200);
      if (!onPostgres) return;
      if (Date.now() - started > 10_000) throw new Error("the instance never answered the client from its cache");
    } while ((await clientCacheHits(instance)) === before);
  }

  it("a secret rotated by another process: A refuses the old secret on its next request and takes the new one", async () => {
    const [a] = instances as [Instance];
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "client_credentials", redirectUris: [] });
    const grant = (secret: string) => post(a, TOKEN, { grant_type: "client_credentials", client_id: client.client_id, client_secret: secret });
    await cachedAt(a, () => grant(client.client_secret!));
    const secret = await rotateClientSecret({ ownerId: owner.id, clientId: client.client_id });
    expect(await grant(client.client_secret!)).toEqual({ status: 401, body: { error: "invalid_client" } });
    expect((await grant(secret)).status).toBe(200);
  }, 60_000);

  it("a registered client deleted at B (RFC 7592 2.3): A refuses it on its next request", async () => {
    const [a, b] = instances as [Instance, Instance];
    const registered = await post(b, REGISTER, { client_name: "Agent", redirect_uris: ["https://agent.example.test/callback"], token_endpoint_auth_method: "none" } as never);
    expect(registered.status).toBe(201);
    const { client_id: clientId, registration_access_token: registrationToken, registration_client_uri: uri } = registered.body as Record<string, string>;
    const revoke = () => post(a, REVOKE, { token: "not-a-token", client_id: clientId! });
    await cachedAt(a, revoke);
    const deleted = await fetch(`${b.url}${new URL(uri!).pathname}`, { method: "DELETE", headers: { authorization: `Bearer ${registrationToken}` } });
    expect(deleted.status).toBe(204);
    expect((await revoke()).status).toBe(401);
  }, 60_000);
});
