// A limit holds across server instances even under a burst (docs/rules/accounts.md#limits): two instances run
// as two processes on the test database, and one burst of wrong passwords for one user of one client is split
// between them. Each request is held at the entrance: its headers and all but the last byte of its body are on
// the wire, so that its handler is waiting for the body, until every request has got that far; then every last
// byte goes at once.
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { db } from "@/db/client";
import { makeClient, makeUser } from "@/testing/factories";
import { startedInstances } from "@/testing/instance";
import { Barrier, together } from "@/testing/race";

const instances = startedInstances(2);

/** A JSON POST whose last byte is sent only once every request sharing `barrier` has sent the rest. */
function heldPost(url: string, body: unknown, barrier: Barrier): Promise<{ status: number; body: unknown }> {
  const bytes = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "content-type": "application/json", "content-length": String(bytes.length) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) as unknown }));
    });
    req.on("error", reject);
    req.write(bytes.subarray(0, -1), () => void barrier.arrive().then(() => req.end(bytes.subarray(-1))));
  });
}

describe("the password grant's limit across instances, under a burst", () => {
  it("30 wrong passwords at once, split between two instances: 10 are tried and counted, 20 are 429", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const barrier = new Barrier(30);
    const results = await together(
      barrier,
      Array.from({ length: 30 }, (_, i) =>
        heldPost(
          `${instances[i % 2]!.url}/api/connect/oauth2/token/`,
          { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: owner.email, password: `guess ${i}` },
          barrier,
        ),
      ),
      60_000,
    );
    expect(barrier.arrived).toBe(30);
    expect(results.filter((r) => r.status === 400)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429).map((r) => r.body)).toEqual(Array.from({ length: 20 }, () => ({ error: "rate_limited" })));
    expect(await (await db()).failedAttempt.count({ where: { key: `password:${client.client_id}:${owner.email}` } })).toBe(10);
  }, 120_000);
});
