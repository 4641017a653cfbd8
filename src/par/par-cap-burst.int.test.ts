// The per-client cap on unexpired pushed requests holds for pushes sent at once (docs/rules/accounts.md#limits,
// docs/rules/tokens.md#pushed-authorization-requests): each push inserts and then counts the others in one
// transaction serialised per client, so of a burst that meets the cap only the ones that fit are stored.
// On PostgreSQL the per-client lock is what serialises them; SQLite's write lock does it anyway.
import { describe, expect, it } from "vitest";
import { nowMs } from "@/clock";
import { db, write } from "@/db/client";
import { s256 } from "@/oauth/pkce";
import { MAX_LIVE_PUSHED_REQUESTS } from "@/par/pushed-requests";
import { digest } from "@/secrets";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { Barrier, together } from "@/testing/race";

const PAR = "/api/connect/oauth2/par/";
const REDIRECT = "https://client.example.test/callback";

describe("a burst of pushes at the cap", () => {
  it("of eight pushes sent at once with room for two, two are stored and six refused", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", firstParty: true });
    const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    const expiresAt = new Date(nowMs() + 50_000);
    await write((tx) =>
      tx.pushedAuthorizationRequest.createMany({
        data: Array.from({ length: MAX_LIVE_PUSHED_REQUESTS - 2 }, (_, i) => ({ digest: digest(`burst-${row.id}-${i}`), clientId: row.id, params: "[]", expiresAt })),
      }),
    );
    const body = { response_type: "code", client_id: client.client_id, client_secret: client.client_secret, redirect_uri: REDIRECT, scope: "readonly", state: "st", code_challenge: s256("v".repeat(64)), code_challenge_method: "S256" };
    const barrier = new Barrier(8);
    const results = await together(barrier, Array.from({ length: 8 }, () => call("POST", PAR, { body, heldBy: barrier })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 429, 429, 429, 429, 429, 429]);
    expect(await (await db()).pushedAuthorizationRequest.count({ where: { clientId: row.id } })).toBe(MAX_LIVE_PUSHED_REQUESTS);
  });
});
