// The outbox sweep each server process runs and delivery right after a response
// (docs/rules/permission-requests.md#mail-and-the-outbox, src/email/sweep.ts, src/email/deliver-soon.ts): the
// runs that follow the first one, what the operator reads in the log (a run that sent or failed something, a
// run that broke, never an idle run), a failing run not stopping the next, and shutdown waiting for a run in
// progress. The sweep's own timers are driven with vitest's fake setTimeout/setInterval (nothing else is
// faked: the clock, the database and the HTTP calls to the Resend stand-in are real). Like
// own-outbox.int.test.ts this file delivers everything that is due, so it runs on a database of its own,
// chosen before anything reads the environment.
import { rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const ownDatabase = vi.hoisted(() => {
  const file = `${process.env.TEST_SCRATCH_DIR}/sweep-${process.pid}-${Math.random().toString(36).slice(2)}.db`;
  process.env.DATABASE_URL = `file:${file}`;
  process.env.RESEND_API_KEY = "re_test_key";
  process.env.MAIL_FROM = "Tests <tests@example.test>";
  process.env.LOG_LEVEL = "info"; // the sweep's log lines are part of what is checked
  return file;
});

import { deliverSoon } from "@/email/deliver-soon";
import { enqueueMail } from "@/email/outbox";
import { startMailSweep, stopMailSweep, SWEEP_INTERVAL_MS } from "@/email/sweep";
import { runAfterTasks, runWithRequestContext, type AfterTask } from "@/http/request-context";
import { db, disconnectDb, write } from "@/db/client";
import { migrate } from "@/db/migrate";
import { refuseUpdates } from "@/testing/faults";
import { captureLog } from "@/testing/log-capture";
import { startResendStandIn } from "@/testing/resend-stand-in";

let resend: Awaited<ReturnType<typeof startResendStandIn>>;
beforeAll(async () => {
  resend = await startResendStandIn();
  process.env.RESEND_BASE_URL = resend.url; // read when the Resend client is made, at the first delivery
  await migrate();
});
afterAll(async () => {
  vi.useRealTimers();
  await stopMailSweep();
  await resend.close();
  await disconnectDb();
  for (const suffix of ["", "-wal", "-shm"]) rmSync(ownDatabase + suffix, { force: true });
});

const mail = (to: string) => write((tx) => enqueueMail(tx, { to, subject: `To ${to}`, text: "t", html: "<p>t</p>" }));
const statusOf = async (id: number) => (await (await db()).mailMessage.findUniqueOrThrow({ where: { id } })).status;

/** Waits (with real timers) for `check` to hold; fails after about 30 seconds. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`never saw ${what}`);
}

/**
 * Waits until no sweep run is in progress. A run that finds nothing due leaves no trace but this (the sweep's
 * own state), and the next tick must not find the previous run still going.
 */
const idle = () =>
  until("the sweep run finish", () => {
    const state = (globalThis as { __mailSweep?: { running: Promise<void> | null } | "stopped" }).__mailSweep;
    return typeof state === "object" && state.running === null;
  });

const sweepLines = (lines: Record<string, unknown>[]) =>
  lines.filter((line) => String(line.message).startsWith("mail sweep")).map(({ level, message, sent, failed, everySeconds, error }) => ({ level, message, sent, failed, everySeconds, error }));

describe("the periodic sweep", () => {
  it("runs 5 s after start, then every SWEEP_INTERVAL_MS; logs each run that sent something and each run that broke, never an idle one; a broken run does not stop the next; shutdown waits for a run in progress", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const first = await mail("first@example.test");
    const { lines } = await captureLog(async (linesSoFar) => {
      startMailSweep();
      vi.advanceTimersByTime(5_000);
      await until("the first run's mail sent", async () => (await statusOf(first)) === "sent");
      await idle();

      // Nothing due: the run sends nothing and logs nothing.
      vi.advanceTimersByTime(SWEEP_INTERVAL_MS);
      await idle();

      // The database refuses the claim of this message: the run fails, and says so.
      const refused = await mail("refused@example.test");
      const undo = await refuseUpdates("MailMessage", "id", refused);
      vi.advanceTimersByTime(SWEEP_INTERVAL_MS);
      await until("the failed run's log line", () => linesSoFar().some((line) => line.message === "mail sweep failed"));
      await idle();
      expect(await statusOf(refused)).toBe("pending");
      await undo();

      // The next run goes on as usual and delivers it.
      vi.advanceTimersByTime(SWEEP_INTERVAL_MS);
      await until("the refused mail sent on the next run", async () => (await statusOf(refused)) === "sent");
      await idle();

      // Shutdown during a run: the provider holds its answer; stopping resolves only once the run is over.
      const letGo = resend.hold();
      const last = await mail("last@example.test");
      vi.advanceTimersByTime(SWEEP_INTERVAL_MS);
      await resend.receivedCount(3, 30_000);
      let stopped = false;
      const stopping = stopMailSweep().then(() => (stopped = true));
      await sleep(100);
      expect(stopped).toBe(false); // the provider has not answered yet: nothing lets the run end
      letGo();
      await stopping;
      expect(await statusOf(last)).toBe("sent");
    });
    vi.useRealTimers();
    expect(sweepLines(lines)).toEqual([
      { level: "info", message: "mail sweep started", everySeconds: SWEEP_INTERVAL_MS / 1000, sent: undefined, failed: undefined, error: undefined },
      { level: "info", message: "mail sweep", sent: 1, failed: 0, everySeconds: undefined, error: undefined },
      { level: "warn", message: "mail sweep failed", error: expect.stringMatching(/\S/), sent: undefined, failed: undefined, everySeconds: undefined },
      { level: "info", message: "mail sweep", sent: 1, failed: 0, everySeconds: undefined, error: undefined },
      { level: "info", message: "mail sweep", sent: 1, failed: 0, everySeconds: undefined, error: undefined },
    ]);
    expect(resend.received.map((received) => received.body.to)).toEqual(["first@example.test", "refused@example.test", "last@example.test"]);
  });
});

describe("delivery right after a response", () => {
  it("logs a warning when the delivery breaks (here the database refuses the claim), and leaves the mail pending for the sweep", async () => {
    const id = await mail("after@example.test");
    const undo = await refuseUpdates("MailMessage", "id", id);
    const { lines } = await captureLog(async () => {
      const after: AfterTask[] = [];
      runWithRequestContext({ ip: null, after }, () => deliverSoon([id]));
      expect(after).toHaveLength(1);
      await runAfterTasks(after);
    });
    await undo();
    expect(lines).toEqual([
      expect.objectContaining({ level: "warn", message: "mail delivery after response failed; the sweep will retry", error: expect.stringMatching(/\S/) }),
    ]);
    expect(await (await db()).mailMessage.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "pending", attempts: 0 });
  });
});
