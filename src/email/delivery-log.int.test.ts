// What delivery logs (docs/rules/operations.md#mail-delivery): each message sent, each failed attempt and the
// last one, and whether a sweep starts at all. The log level is read once per process, so the modules are
// loaded afresh with LOG_LEVEL=debug. Every test delivers only its own messages (`ids`), since the outbox is
// shared.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { captureLog } from "@/testing/log-capture";
import { uniqueEmail } from "@/testing/factories";

type Deliver = typeof import("@/email/deliver");
let deliver: Deliver;
let enqueueMail: typeof import("@/email/outbox").enqueueMail;
let write: typeof import("@/db/client").write;
let startMailSweep: typeof import("@/email/sweep").startMailSweep;
let stopMailSweep: typeof import("@/email/sweep").stopMailSweep;
const original = process.env.LOG_LEVEL;
beforeAll(async () => {
  vi.resetModules();
  process.env.LOG_LEVEL = "debug";
  deliver = await import("@/email/deliver");
  ({ enqueueMail } = await import("@/email/outbox"));
  ({ write } = await import("@/db/client"));
  ({ startMailSweep, stopMailSweep } = await import("@/email/sweep"));
});
afterAll(() => {
  process.env.LOG_LEVEL = original;
  vi.resetModules();
});

const newMail = () => write((tx) => enqueueMail(tx, { to: uniqueEmail("log"), subject: "Logged", text: "t", html: "<p>t</p>" }));

describe("delivery's log lines", () => {
  it("one line per message sent, with its id and attempt", async () => {
    const id = await newMail();
    const { lines } = await captureLog(() => deliver.deliverDue({ transport: async () => ({ providerId: "p" }), ids: [id] }));
    expect(lines).toEqual([expect.objectContaining({ level: "info", message: "mail sent", mailId: id, attempts: 1 })]);
  });

  it("a failed attempt says it will retry; the last one says it failed for good; neither shows a token", async () => {
    const id = await newMail();
    const failing = async () => {
      throw new Error("refused http://localhost:3000/redeem?token=secret-token-value");
    };
    const first = await captureLog(() => deliver.deliverDue({ transport: failing, ids: [id] }));
    expect(first.lines).toEqual([
      expect.objectContaining({ level: "warn", message: "mail delivery failed, will retry", mailId: id, attempts: 1, error: "refused http://localhost:3000/redeem?token=[redacted]" }),
    ]);
    await write((tx) => tx.mailMessage.update({ where: { id }, data: { attempts: deliver.MAX_ATTEMPTS - 1, nextAttemptAt: new Date(0) } }));
    const last = await captureLog(() => deliver.deliverDue({ transport: failing, ids: [id] }));
    expect(last.lines).toEqual([expect.objectContaining({ level: "warn", message: "mail delivery failed for good", mailId: id, attempts: deliver.MAX_ATTEMPTS })]);
    expect(JSON.stringify([...first.lines, ...last.lines])).not.toContain("secret-token-value");
  });

  it("without RESEND_API_KEY no sweep starts, and the log says where the mail stays", async () => {
    const { lines } = await captureLog(async () => startMailSweep());
    expect(lines).toEqual([expect.objectContaining({ level: "info", message: "RESEND_API_KEY is not set: mail stays in the outbox (npm run cli -- mail:list)" })]);
    expect((globalThis as { __mailSweep?: unknown }).__mailSweep).toBeUndefined();
  });

  it("graceful shutdown with no sweep running (no RESEND_API_KEY) stops at once, and no sweep starts afterwards", async () => {
    await expect(stopMailSweep()).resolves.toBeUndefined();
    const { lines } = await captureLog(async () => startMailSweep());
    expect(lines).toEqual([]);
  });
});
