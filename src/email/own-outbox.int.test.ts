// Delivery of the whole outbox in-process (CONTRACT.md 6): the periodic sweep each instance runs, delivery
// right after a response, and a provider outage. These deliver everything that is due, so this file runs on a
// database of its own: a new SQLite file, migrated by the same runner, chosen before anything reads the
// environment (each test file runs in its own worker, with its own environment and database client). On the
// shared test database the sweep would send the mail other test files are reading.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const ownDatabase = vi.hoisted(() => {
  const file = `${process.cwd()}/.data/test/own-outbox-${process.pid}-${Math.random().toString(36).slice(2)}.db`;
  process.env.DATABASE_URL = `file:${file}`;
  process.env.RESEND_API_KEY = "re_test_key";
  process.env.MAIL_FROM = "Tests <tests@example.test>";
  return file;
});

import { advanceClock, nowMs, resetClock } from "@/clock";
import { createBundle } from "@/bundles/create-bundle";
import { deliverDue, pendingMailCount } from "@/email/deliver";
import { getMailboxMessage, listMailbox, mailboxEnabled } from "@/email/mailbox";
import { enqueueMail } from "@/email/outbox";
import { startMailSweep, SWEEP_INTERVAL_MS } from "@/email/sweep";
import { db, disconnectDb, write } from "@/server/db";
import { migrate } from "@/server/migrate";
import { call } from "@/testing/app";
import { makeUser, passwordSession } from "@/testing/factories";
import { startResendStandIn } from "@/testing/resend-stand-in";

let resend: Awaited<ReturnType<typeof startResendStandIn>>;
beforeAll(async () => {
  resend = await startResendStandIn();
  // The Resend client reads RESEND_BASE_URL when it is made, at the first delivery.
  process.env.RESEND_BASE_URL = resend.url;
  await migrate();
});
afterAll(async () => {
  const sweep = (globalThis as { __mailSweep?: NodeJS.Timeout }).__mailSweep;
  if (sweep) clearInterval(sweep);
  resetClock();
  await resend.close();
  await disconnectDb();
  for (const suffix of ["", "-wal", "-shm"]) rmSync(ownDatabase + suffix, { force: true });
});

const mails = async () => (await db()).mailMessage.findMany({ orderBy: { id: "asc" } });
const mail = (to: string, subject: string) => write((tx) => enqueueMail(tx, { to, subject, text: `${subject} in text`, html: `<p>${subject}</p>` }));

/** Waits for `check` to hold, looking again every 50 ms. */
async function until<T>(what: string, check: () => Promise<T | null | false>, tries = 600): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value) return value;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`never saw ${what}`);
}

describe("on a database of its own", () => {
  it("uses that database: it starts empty", async () => {
    expect(await (await db()).user.count()).toBe(0);
    expect(await pendingMailCount()).toBe(0);
  });

  it("delivers a permission request's mail right after the response; the response does not wait for the provider", async () => {
    const owner = await makeUser();
    await write((tx) => tx.user.update({ where: { id: owner.id }, data: { emailVerifiedAt: new Date() } }));
    const requester = await passwordSession();
    const bundle = await createBundle({ ownerId: owner.id, name: "Right away" });
    const letGo = resend.hold();
    const created = await call("POST", "/api/bundle_permission_request/", {
      token: requester.accessToken,
      body: { bundle: bundle.id, user_allowed: requester.user.id, user_target: owner.id },
    });
    expect(created.status).toBe(201);
    await resend.receivedCount(1, 30_000);
    expect((await mails()).map((m) => [m.to, m.status])).toEqual([[owner.email, "sending"]]);
    letGo();
    const [sent] = await until("the mail sent", async () => {
      const rows = await mails();
      return rows[0]?.status === "sent" ? rows : null;
    });
    expect(sent).toMatchObject({ to: owner.email, status: "sent", attempts: 1, providerId: "re_standin_1" });
    expect(resend.received[0]!.body).toMatchObject({ to: owner.email, from: "Tests <tests@example.test>" });
  });

  it("during a provider outage keeps the mail and retries it: nothing is lost", async () => {
    resend.setFailing(true);
    const id = await mail("outage@example.test", "During the outage");
    const failed = await deliverDue();
    expect(failed).toMatchObject({ sent: 0, failed: 1, delivering: true });
    const row = (await mails()).find((m) => m.id === id)!;
    expect(row).toMatchObject({ status: "pending", attempts: 1, lastError: "resend application_error (500): stand-in outage" });
    resend.setFailing(false);
    advanceClock(row.nextAttemptAt.getTime() - nowMs());
    expect(await deliverDue()).toMatchObject({ sent: 1, failed: 0 });
    expect((await mails()).find((m) => m.id === id)).toMatchObject({ status: "sent", attempts: 2 });
    resetClock();
  });

  it("the sweep each instance starts delivers what is due, once; starting it again starts nothing", async () => {
    const before = resend.received.length;
    const id = await mail("swept@example.test", "Left for the sweep");
    startMailSweep();
    const timer = (globalThis as { __mailSweep?: NodeJS.Timeout }).__mailSweep;
    expect(timer).toBeDefined();
    startMailSweep();
    expect((globalThis as { __mailSweep?: NodeJS.Timeout }).__mailSweep).toBe(timer);
    // The first sweep runs a few seconds after start, then every SWEEP_INTERVAL_MS.
    await resend.receivedCount(before + 1, 30_000);
    const swept = await until("the swept mail sent", async () => {
      const row = (await mails()).find((m) => m.id === id);
      return row?.status === "sent" ? row : null;
    });
    expect(swept).toMatchObject({ status: "sent", attempts: 1 });
    expect(resend.received.slice(before).map((m) => m.body.to)).toEqual(["swept@example.test"]);
    expect(SWEEP_INTERVAL_MS).toBeLessThanOrEqual(60_000);
  });

  it("the development mailbox lists the outbox newest first, and opens one message", async () => {
    expect(mailboxEnabled()).toBe(true); // NODE_ENV=test, DEV_MAILBOX unset
    const first = await mail("box@example.test", "Older");
    const second = await mail("box@example.test", "Newer");
    const listed = await listMailbox(2);
    expect(listed.map((m) => m.id)).toEqual([second, first]);
    expect(Object.keys(listed[0]!).sort()).toEqual(["createdAt", "id", "status", "subject", "to"]);
    expect(await getMailboxMessage(second)).toMatchObject({ subject: "Newer", text: "Newer in text", html: "<p>Newer</p>" });
    expect(await getMailboxMessage(999_999)).toBeNull();
    expect(await pendingMailCount()).toBeGreaterThanOrEqual(2);
  });
});
