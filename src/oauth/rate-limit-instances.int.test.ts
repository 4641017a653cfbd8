// docs/rules/accounts.md#limits: failed password attempts are counted per client and e-mail in the database,
// so the limit holds across server instances. Two instances run as two processes on the test database, each
// answering on its own socket; the failures are split between them, and both refuse the eleventh try.
import { describe, expect, it } from "vitest";
import { makeClient, makeUser } from "@/testing/factories";
import { startedInstances, type Instance } from "@/testing/instance";

const instances = startedInstances(2);

describe("the failed-attempt limit across instances", () => {
  it("five failures at each of two instances: the eleventh try is 429 at both, even with the right password", async () => {
    const [a, b] = instances as [Instance, Instance];
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const attempt = async (instance: Instance, password: string) => {
      const response = await fetch(`${instance.url}/api/connect/oauth2/token/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: owner.email, password }),
      });
      return { status: response.status, retryAfter: response.headers.get("retry-after"), body: (await response.json()) as unknown };
    };
    for (let i = 0; i < 5; i++) {
      for (const instance of [a, b]) {
        const failed = await attempt(instance, `wrong password ${i}`);
        expect({ status: failed.status, body: failed.body }).toEqual({ status: 400, body: { error: "invalid_grant" } });
      }
    }
    for (const instance of [a, b]) {
      const limited = await attempt(instance, owner.password);
      expect({ status: limited.status, body: limited.body }).toEqual({ status: 429, body: { error: "rate_limited" } });
      expect(Number(limited.retryAfter)).toBeGreaterThan(0);
      expect(Number(limited.retryAfter)).toBeLessThanOrEqual(900);
    }
  }, 120_000);
});
