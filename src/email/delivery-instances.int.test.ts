// Outbox delivery as server instances do it (docs/rules/permission-requests.md#mail-and-the-outbox): attempted
// right after the response and by a periodic sweep in each server instance. Each instance is a separate
// process (src/testing/instance.ts) whose Resend client is pointed at a local stand-in for Resend's API
// (src/testing/resend-stand-in.ts), the one thing stood in for. The sweep delivers everything that is due, so
// its test gives its instances a database of their own: on the shared test database it would send the mail
// other test files are reading.
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBundle } from "@/bundles/create-bundle";
import { idempotencyKey } from "@/email/deliver";
import { db, write } from "@/db/client";
import { runCliWith } from "@/testing/cli";
import { makeUser, passwordSession } from "@/testing/factories";
import { startInstance, type Instance } from "@/testing/instance";
import { startResendStandIn } from "@/testing/resend-stand-in";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function instance(options: Parameters<typeof startInstance>[0]): Promise<Instance> {
  const started = await startInstance(options);
  cleanups.push(() => started.stop());
  return started;
}

async function standIn() {
  const started = await startResendStandIn();
  cleanups.push(() => started.close());
  return started;
}

/** Waits for `check` to hold, looking again every 50 ms, for at most `tries` looks. */
async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, tries = 400): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value) return value;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`never saw ${what}`);
}

const post = (url: string, token: string, body: unknown) =>
  fetch(`${url}/api/bundle_permission_request/`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("delivery right after the response", () => {
  it("the instance that answered sends the mail once the response is out, without making the response wait", async () => {
    const resend = await standIn();
    const server = await instance({ env: { RESEND_API_KEY: "re_test_key", RESEND_BASE_URL: resend.url, MAIL_FROM: "Tests <tests@example.test>" } });
    const owner = await makeUser();
    await write((tx) => tx.user.update({ where: { id: owner.id }, data: { emailVerifiedAt: new Date() } }));
    const requester = await passwordSession();
    const bundle = await createBundle({ ownerId: owner.id, name: "Mailed at once" });

    // The provider holds its answer: the 201 arrives anyway, and the mail is then on its way.
    const letGo = resend.hold();
    const created = await post(server.url, requester.accessToken, { bundle: bundle.id, user_allowed: requester.user.id, user_target: owner.id });
    expect(created.status).toBe(201);
    await resend.receivedCount(1, 30_000);
    const mails = (await db()).mailMessage;
    const sending = await mails.findFirstOrThrow({ where: { to: owner.email } });
    expect(sending).toMatchObject({ status: "sending", attempts: 1 });
    letGo();

    const sent = await until("the mail marked sent", async () => {
      const row = await mails.findFirstOrThrow({ where: { to: owner.email } });
      return row.status === "sent" ? row : null;
    });
    expect(sent).toMatchObject({ status: "sent", attempts: 1, providerId: "re_standin_1", lastError: null });
    expect(resend.received).toHaveLength(1);
    expect(resend.received[0]!.headers["idempotency-key"]).toBe(idempotencyKey(sent));
    expect(resend.received[0]!.body).toMatchObject({ from: "Tests <tests@example.test>", to: owner.email, subject: sent.subject });
  }, 120_000);
});

describe("the sweep each instance runs", () => {
  it("delivers the mail an instance without a provider left in the outbox", async () => {
    const file = join(process.env.TEST_SCRATCH_DIR!, `sweep-${process.pid}-${randomBytes(4).toString("hex")}.db`);
    cleanups.push(() => ["", "-wal", "-shm"].forEach((suffix) => rmSync(file + suffix, { force: true })));
    const env = { DATABASE_URL: `file:${file}` };
    const cli = async (...args: string[]) => {
      const run = await runCliWith(env, ...args, "--json");
      expect(run.stderr).toBe("");
      return JSON.parse(run.stdout) as Record<string, unknown>;
    };
    // The first command migrates the new database; the others can then run side by side.
    const owner = await cli("user:create", "--email", "owner@sweep.test", "--password", "owner password", "--name", "Owner");
    const [requester, bundle] = await Promise.all([
      cli("user:create", "--email", "requester@sweep.test", "--password", "requester password", "--name", "Requester"),
      cli("bundle:create", "--owner", "owner@sweep.test", "--name", "Swept"),
    ]);
    const client = await cli("client:create", "--owner", "requester@sweep.test", "--name", "Script", "--grant", "password");

    // An instance with no provider answers the request; its mail stays in the outbox.
    const first = await instance({ env });
    const grant = await fetch(`${first.url}/api/connect/oauth2/token/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: "requester@sweep.test", password: "requester password", scope: "readwrite" }),
    });
    const { access_token } = (await grant.json()) as { access_token: string };
    const created = await post(first.url, access_token, { bundle: bundle.id, user_allowed: requester.id, user_target: owner.id });
    expect(created.status).toBe(201);
    await first.stop();
    const outbox = () => {
      const sqlite = new Database(file, { readonly: true, timeout: 5000 });
      try {
        return sqlite.prepare(`SELECT "to", "status", "attempts" FROM "MailMessage"`).all();
      } finally {
        sqlite.close();
      }
    };
    expect(outbox()).toEqual([{ to: "owner@sweep.test", status: "pending", attempts: 0 }]);

    // A new instance with a provider starts its sweep (as Next's instrumentation hook does) and sends it.
    const resend = await standIn();
    const second = await instance({ env: { ...env, RESEND_API_KEY: "re_test_key", RESEND_BASE_URL: resend.url, LOG_LEVEL: "info" }, instrumentation: true });
    await resend.receivedCount(1);
    await second.printed(/"message":"mail sweep"[^\n]*"sent":1/);
    expect(resend.received.map((mail) => mail.body.to)).toEqual(["owner@sweep.test"]);
    expect(outbox()).toEqual([{ to: "owner@sweep.test", status: "sent", attempts: 1 }]);
  }, 300_000);
});
