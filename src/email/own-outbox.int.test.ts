// Delivery of the whole outbox in-process (docs/rules/permission-requests.md#mail-and-the-outbox): the
// periodic sweep each instance runs, delivery right after a response, and a provider outage. These deliver
// everything that is due, so this file runs on a database of its own: a new SQLite file, migrated by the same
// runner, chosen before anything reads the environment (each test file runs in its own worker, with its own
// environment and database client). On the shared test database the sweep would send the mail other test files
// are reading.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";

const ownDatabase = vi.hoisted(() => {
  const file = `${process.env.TEST_SCRATCH_DIR}/own-outbox-${process.pid}-${Math.random().toString(36).slice(2)}.db`;
  process.env.DATABASE_URL = `file:${file}`;
  process.env.RESEND_API_KEY = "re_test_key";
  process.env.MAIL_FROM = "Tests <tests@example.test>";
  process.env.LOG_LEVEL = "info"; // the sweep's log lines are part of what is checked
  return file;
});

import { advanceClock, nowMs, resetClock } from "@/clock";
import { createBundle } from "@/bundles/create-bundle";
import { defaultTransport, deliverDue, MAX_ATTEMPTS, pendingMailCount, resendTransport, type MailTransport } from "@/email/deliver";
import { listMail } from "@/email/list-mail";
import { renderPermissionRequestMail } from "@/email/permission-request-mail";
import { formatDateTime } from "@/format/date-time";
import { getMailboxMessage, listMailbox, mailboxEnabled } from "@/email/mailbox";
import { enqueueMail } from "@/email/outbox";
import { startMailSweep, stopMailSweep, SWEEP_INTERVAL_MS } from "@/email/sweep";
import { db, disconnectDb, write } from "@/db/client";
import { migrate } from "@/db/migrate";
import { startServer } from "@/testing/app";
import { makeUser, passwordSession } from "@/testing/factories";
import { captureLog } from "@/testing/log-capture";
import { startResendStandIn } from "@/testing/resend-stand-in";

let resend: Awaited<ReturnType<typeof startResendStandIn>>;
beforeAll(async () => {
  resend = await startResendStandIn();
  // The Resend client reads RESEND_BASE_URL when it is made, at the first delivery.
  process.env.RESEND_BASE_URL = resend.url;
  await migrate();
});
afterAll(async () => {
  await stopMailSweep();
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
    // Another message is due too: delivery right after a response sends only that response's own mail.
    const bystander = await mail("bystander@example.test", "Not this response's mail");
    const letGo = resend.hold();
    // The production fast lane on a socket: it answers, then runs the work queued for after the response.
    // The provider holds its answer until the test lets it go, after the response has arrived.
    const server = await startServer();
    onTestFinished(() => server.close());
    const created = await fetch(`${server.url}/api/bundle_permission_request/`, {
      method: "POST",
      headers: { authorization: `Bearer ${requester.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ bundle: bundle.id, user_allowed: requester.user.id, user_target: owner.id }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ bundle: { id: bundle.id }, status: "pending" });
    await resend.receivedCount(1, 30_000);
    expect((await mails()).map((m) => [m.to, m.status])).toEqual([
      ["bystander@example.test", "pending"],
      [owner.email, "sending"],
    ]);
    letGo();
    const [sent] = await until("the mail sent", async () => {
      const rows = (await mails()).filter((m) => m.to === owner.email);
      return rows[0]?.status === "sent" ? rows : null;
    });
    expect((await mails()).find((m) => m.id === bystander)).toMatchObject({ status: "pending", attempts: 0 });
    await write((tx) => tx.mailMessage.update({ where: { id: bystander }, data: { status: "sent" } }));
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
    const { result: swept, lines } = await captureLog(async (linesSoFar) => {
      startMailSweep();
      const timer = (globalThis as { __mailSweep?: object }).__mailSweep;
      expect(timer).toBeDefined();
      startMailSweep();
      expect((globalThis as { __mailSweep?: object }).__mailSweep).toBe(timer);
      // The first sweep runs a few seconds after start, then every SWEEP_INTERVAL_MS.
      await resend.receivedCount(before + 1, 30_000);
      const row = await until("the swept mail sent", async () => {
        const found = (await mails()).find((m) => m.id === id);
        return found?.status === "sent" ? found : null;
      });
      await until("the sweep's log line", async () => linesSoFar().some((line) => line.message === "mail sweep"));
      return row;
    });
    expect(lines.filter((line) => String(line.message).startsWith("mail sweep"))).toEqual([
      expect.objectContaining({ level: "info", message: "mail sweep started", everySeconds: SWEEP_INTERVAL_MS / 1000 }),
      expect.objectContaining({ level: "info", message: "mail sweep", sent: 1, failed: 0 }),
    ]);
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
    // Newest by time, not by id: a message dated later comes first whatever its id.
    await write((tx) => tx.mailMessage.update({ where: { id: first }, data: { createdAt: new Date(Date.now() + 60_000) } }));
    expect((await listMailbox(2)).map((m) => m.id)).toEqual([first, second]);
    // Written in the same millisecond: the later message (the higher id) first.
    await write((tx) => tx.mailMessage.updateMany({ where: { id: { in: [first, second] } }, data: { createdAt: new Date(Date.now() + 120_000) } }));
    expect((await listMailbox(2)).map((m) => m.id)).toEqual([second, first]);
    expect(Object.keys(listed[0]!).sort()).toEqual(["createdAt", "id", "status", "subject", "to"]);
    expect(await getMailboxMessage(second)).toMatchObject({ subject: "Newer", text: "Newer in text", html: "<p>Newer</p>" });
    expect(await getMailboxMessage(999_999)).toBeNull();
    expect(await pendingMailCount()).toBeGreaterThanOrEqual(2);
  });
});

describe("delivery details", () => {
  const only = async (id: number) => (await mails()).find((m) => m.id === id)!;

  it("the transport is Resend's, made once for the configured key", () => {
    const transport = defaultTransport();
    expect(transport).toBeTypeOf("function");
    expect(defaultTransport()).toBe(transport);
  });

  it("records why an attempt failed: the provider unreachable, a thrown error redacted and cut to 500 characters, or an empty one", async () => {
    const unreachable = await mail("unreachable@example.test", "Nowhere to go");
    await deliverDue({ transport: resendTransport("re_test_key", "Tests <tests@example.test>", "http://127.0.0.1:1"), ids: [unreachable] });
    expect(await only(unreachable)).toMatchObject({ status: "pending", attempts: 1, lastError: "resend application_error: Unable to fetch data. The request could not be resolved." });

    const long = await mail("long@example.test", "Long error");
    const secretLink = "http://localhost:3000/redeem?token=abcdefghijklmnop";
    const throwsLong: MailTransport = async () => {
      throw new Error(`refused ${secretLink} ${"x".repeat(600)}`);
    };
    await deliverDue({ transport: throwsLong, ids: [long] });
    const failedLong = await only(long);
    expect(failedLong.lastError).toHaveLength(500);
    expect(failedLong.lastError!.startsWith("refused http://localhost:3000/redeem?token=[redacted] xxx")).toBe(true);

    const empty = await mail("empty@example.test", "Empty error");
    const throwsNothing: MailTransport = async () => {
      throw new Error("");
    };
    await deliverDue({ transport: throwsNothing, ids: [empty] });
    expect((await only(empty)).lastError).toBe("unknown error");

    const odd = await mail("odd@example.test", "Thrown string");
    const throwsString: MailTransport = async () => {
      throw "provider said no";
    };
    await deliverDue({ transport: throwsString, ids: [odd] });
    expect((await only(odd)).lastError).toBe("provider said no");
  });

  it("sends due messages oldest due first, and counts only pending ones as waiting", async () => {
    const at = Date.now();
    const ids = [await mail("order-a@example.test", "A"), await mail("order-b@example.test", "B"), await mail("order-c@example.test", "C")];
    const dueAt = [at - 1_000, at - 3_000, at - 2_000];
    for (const [i, id] of ids.entries()) await write((tx) => tx.mailMessage.update({ where: { id }, data: { nextAttemptAt: new Date(dueAt[i]!) } }));
    const pending = await (await db()).mailMessage.count({ where: { status: "pending" } });
    expect(await pendingMailCount()).toBe(pending);
    const order: number[] = [];
    await deliverDue({ transport: async (message) => (order.push(message.id), { providerId: null }), ids });
    expect(order).toEqual([ids[1], ids[2], ids[0]]);
    expect(await pendingMailCount()).toBe(pending - 3);
  });

  it("leaves a message on its last attempt alone while its claim is fresh", async () => {
    const id = await mail("last-attempt@example.test", "Being sent");
    await write((tx) => tx.mailMessage.update({ where: { id }, data: { status: "sending", attempts: MAX_ATTEMPTS, claimedAt: new Date() } }));
    expect(await deliverDue({ transport: async () => ({ providerId: "p" }), ids: [id] })).toEqual({ sent: 0, failed: 0, gaveUp: 0, delivering: true });
    expect(await only(id)).toMatchObject({ status: "sending", attempts: MAX_ATTEMPTS, lastError: null });
  });

  it("keeps no provider id when the provider answers none", async () => {
    const id = await mail("noid@example.test", "No id");
    expect(await deliverDue({ transport: async () => ({ providerId: null }), ids: [id] })).toMatchObject({ sent: 1 });
    expect(await only(id)).toMatchObject({ status: "sent", providerId: null, lastError: null });
  });

  it("delivers more than one batch in a run: thirty due messages, thirty sent", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) ids.push(await mail(`batch-${i}@example.test`, `Batch ${i}`));
    const sentTo: string[] = [];
    const result = await deliverDue({ transport: async (message) => (sentTo.push(message.to), { providerId: `p-${message.id}` }), ids });
    expect(result).toEqual({ sent: 30, failed: 0, gaveUp: 0, delivering: true });
    expect(new Set(sentTo).size).toBe(30);
    expect((await mails()).filter((m) => ids.includes(m.id)).every((m) => m.status === "sent")).toBe(true);
  });

  it("mail:list's view: newest first, ids breaking ties, one recipient in any case and spacing", async () => {
    const a = await mail("list@example.test", "First");
    const b = await mail("list@example.test", "Second");
    await write((tx) => tx.mailMessage.updateMany({ where: { id: { in: [a, b] } }, data: { createdAt: new Date("2026-01-02T03:04:05.000Z") } }));
    const listed = await listMail({ to: "  List@Example.TEST " });
    expect(listed).toEqual([
      { to: "list@example.test", subject: "Second", text: "Second in text", html: "<p>Second</p>", status: "pending", created_at: "2026-01-02T03:04:05.000Z" },
      { to: "list@example.test", subject: "First", text: "First in text", html: "<p>First</p>", status: "pending", created_at: "2026-01-02T03:04:05.000Z" },
    ]);
    expect((await listMail()).length).toBe((await mails()).length);
  });

  it("a permission-request mail's subject is one line whatever the names hold, and the expiry is in UTC", async () => {
    const expiresAt = formatDateTime(new Date("2026-11-29T14:05:59.999Z"));
    const rendered = await renderPermissionRequestMail("target@example.test", {
      targetName: "Tina",
      requesterId: 1,
      requesterName: "  Rita\n  Requester",
      requesterEmail: null,
      allowedId: 2,
      allowedName: "Alan\tAllowed",
      allowedEmail: null,
      requesterIsAllowed: false,
      bundleName: "Two\r\nlines",
      link: "http://localhost:3000/redeem?token=t",
      expiresAt,
    });
    expect(rendered.subject).toBe("Rita Requester asks you to let Alan Allowed read your bundle “Two lines”");
    expect(expiresAt).toContain("UTC");
    expect(rendered.text).toContain(expiresAt);
  });
});
