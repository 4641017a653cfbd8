// Passwords (docs/rules/permission-requests.md#users, docs/rules/accounts.md#password-hashing): stored as
// argon2id, and an unknown e-mail costs the same password-hash work as a known one, so that neither the token
// endpoint nor sign-in tells which e-mails have accounts. The work is counted, not timed:
// src/testing/hash-work.ts counts the argon2 verifications each request starts, through Node's async_hooks,
// while the real code runs.
import { describe, expect, it } from "vitest";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { countHashWork } from "@/testing/hash-work";
import { makeClient, makeUser, uniqueEmail } from "@/testing/factories";
import { runCli } from "@/testing/cli";
import { signInWithPassword } from "@/users/sign-in";
import { verifyPassword } from "@/users/passwords";

const ARGON2ID = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/;

const storedHash = async (email: string) => (await (await db()).user.findUniqueOrThrow({ where: { email } })).passwordHash;

describe("password hashing", () => {
  it("stores passwords as argon2id (m=19 MiB, t=2, p=1), never the password, whether made in-process or by the CLI", async () => {
    const user = await makeUser({ password: "made in process" });
    const email = uniqueEmail("cli");
    const run = await runCli("user:create", "--email", email, "--password", "made by the cli", "--json");
    expect(run.code, run.stderr).toBe(0);
    for (const [address, password] of [[user.email, "made in process"], [email, "made by the cli"]] as const) {
      const hash = await storedHash(address);
      expect(hash).toMatch(ARGON2ID);
      expect(hash).not.toContain(password);
      expect(await verifyPassword(hash, password)).toBe(true);
      expect(await verifyPassword(hash, password + "!")).toBe(false);
    }
  }, 120_000);
});

describe("equal hash work for unknown e-mails", () => {
  it("the password grant verifies one hash for an unknown e-mail, as for a wrong password or another user's right one", async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const grant = (username: string, password: string) =>
      countHashWork(() =>
        call("POST", "/api/connect/oauth2/token/", {
          body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username, password },
        }),
      );
    const cases = {
      "unknown e-mail": await grant(uniqueEmail("nobody"), "whatever password"),
      "wrong password": await grant(owner.email, "wrong password"),
      "another user's right password": await grant(other.email, other.password),
      "the owner's right password": await grant(owner.email, owner.password),
    };
    const seen = Object.fromEntries(Object.entries(cases).map(([name, { result, work }]) => [name, { status: result.status, verifications: work.verifications }]));
    expect(seen).toEqual({
      "unknown e-mail": { status: 400, verifications: 1 },
      "wrong password": { status: 400, verifications: 1 },
      "another user's right password": { status: 400, verifications: 1 },
      "the owner's right password": { status: 200, verifications: 1 },
    });
    for (const name of ["unknown e-mail", "wrong password", "another user's right password"] as const) {
      expect(cases[name].result.json).toEqual({ error: "invalid_grant" });
    }
  });

  it("sign-in verifies one hash for an unknown e-mail, as for a wrong password", async () => {
    const user = await makeUser();
    const unknown = await countHashWork(() => signInWithPassword({ email: uniqueEmail("nobody"), password: "whatever password", ip: "203.0.113.10" }));
    const wrong = await countHashWork(() => signInWithPassword({ email: user.email, password: "wrong password", ip: "203.0.113.10" }));
    expect(unknown.result).toEqual({ ok: false, reason: "invalid" });
    expect(wrong.result).toEqual({ ok: false, reason: "invalid" });
    expect([unknown.work.verifications, wrong.work.verifications]).toEqual([1, 1]);
  });
});
