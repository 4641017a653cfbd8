// Client registration rules (docs/rules/tokens.md#clients, docs/rules/tokens.md#redirect-uris):
// authorization_code and implicit clients need at least one redirect URI; password clients are never public; a
// registered client is first-party only when asked for (the CLI's --first-party; /settings/clients never
// asks). Through the domain function every registration path calls, and through the CLI as an operator runs
// it. Nothing is stored for a refusal.
import { describe, expect, it } from "vitest";
import { createClient } from "@/clients/create-client";
import { ApiError } from "@/http/errors";
import { db } from "@/db/client";
import { runCli } from "@/testing/cli";
import { makeUser } from "@/testing/factories";

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => (error instanceof ApiError ? { status: error.status, error: error.error } : { unexpected: String(error) }),
  );

const clientsOf = async (ownerId: number) => (await db()).client.count({ where: { ownerId } });

describe("redirect URIs are required for code and implicit clients", () => {
  it.each(["authorization_code", "implicit"] as const)("refuses a %s client without one, with 400, and stores nothing", async (grantType) => {
    const owner = await makeUser();
    for (const redirectUris of [[], undefined]) {
      const refused = await refusal(createClient({ ownerId: owner.id, name: "No way back", grantType, redirectUris }));
      expect(refused).toEqual({ status: 400, error: `redirect_uris: a ${grantType} client needs at least one redirect URI` });
    }
    const blank = await refusal(createClient({ ownerId: owner.id, name: "Blank", grantType, redirectUris: ["   "] }));
    expect(blank).toEqual({ status: 400, error: "redirect_uris.0: must be an absolute URL" });
    expect(await clientsOf(owner.id)).toBe(0);
  });

  it("registers a password client without a redirect URI, with a secret", async () => {
    const owner = await makeUser();
    const client = await createClient({ ownerId: owner.id, name: "Script", grantType: "password" });
    expect(client).toMatchObject({ grant_type: "password", redirect_uris: [], public: false, first_party: false, client_secret: expect.stringMatching(/^[\w-]{43}$/) });
  });

  it("the CLI refuses a code client without --redirect-uri: exit 1, one error line, nothing stored", async () => {
    const owner = await makeUser();
    const run = await runCli("client:create", "--owner", owner.email, "--name", "No way back", "--grant", "authorization_code", "--json");
    expect(run).toEqual({ code: 1, stdout: "", stderr: "error: redirect_uris: a authorization_code client needs at least one redirect URI\n" });
    expect(await clientsOf(owner.id)).toBe(0);
  }, 120_000);
});

describe("password clients are never public", () => {
  it("refuses a public password client with 400 and stores nothing; public code clients are allowed", async () => {
    const owner = await makeUser();
    const refused = await refusal(createClient({ ownerId: owner.id, name: "Leaky script", grantType: "password", isPublic: true }));
    expect(refused).toEqual({ status: 400, error: "public: a password client must keep a secret" });
    expect(await clientsOf(owner.id)).toBe(0);
    const native = await createClient({ ownerId: owner.id, name: "Native", grantType: "authorization_code", redirectUris: ["http://127.0.0.1/cb"], isPublic: true });
    expect(native).toMatchObject({ public: true, client_secret: null });
  });

  it("the CLI refuses --public for a password client: exit 1, nothing stored", async () => {
    const owner = await makeUser();
    const run = await runCli("client:create", "--owner", owner.email, "--name", "Leaky script", "--grant", "password", "--public", "--json");
    expect(run).toEqual({ code: 1, stdout: "", stderr: "error: public: a password client must keep a secret\n" });
    expect(await clientsOf(owner.id)).toBe(0);
  }, 120_000);
});

describe("first-party clients", () => {
  it("are first-party only when registered so; by default a client is third-party", async () => {
    const owner = await makeUser();
    const plain = await createClient({ ownerId: owner.id, name: "Plain", grantType: "password" });
    const marked = await createClient({ ownerId: owner.id, name: "Ours", grantType: "password", firstParty: true });
    expect([plain.first_party, marked.first_party]).toEqual([false, true]);
    const rows = await (await db()).client.findMany({ where: { ownerId: owner.id }, orderBy: { id: "asc" } });
    expect(rows.map((row) => row.firstParty)).toEqual([false, true]);
  });
});
