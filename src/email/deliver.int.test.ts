// Outbox delivery (docs/rules/permission-requests.md#mail-and-the-outbox,
// docs/rules/operations.md#mail-delivery): claim-first, retries with backoff, `failed` after the limit, and
// the `mail:deliver` command. The only stand-in is the transport, in place of the mail provider's network
// call. Every test delivers only its own messages (`ids`), since the outbox is shared with test files running
// at once.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import fc from "fast-check";
import { backoffMs, deliverDue, idempotencyKey, MAX_ATTEMPTS, resendTransport, SEND_TIMEOUT_MS, STALE_CLAIM_MS, type MailToSend, type MailTransport } from "@/email/deliver";
import { SWEEP_INTERVAL_MS } from "@/email/sweep";
import { enqueueMail } from "@/email/outbox";
import { renderPermissionRequestMail } from "@/email/permission-request-mail";
import { formatDateTime } from "@/format/date-time";
import PermissionRequestEmail from "@emails/permission-request";
import { db, write } from "@/db/client";
import { runCli } from "@/testing/cli";
import { uniqueEmail } from "@/testing/factories";

afterEach(() => resetClock());

const MINUTE = 60_000;

async function newMessage() {
  const to = uniqueEmail("mail");
  const id = await write((tx) => enqueueMail(tx, { to, subject: "Hello", text: "Hello in text", html: "<p>Hello</p>" }));
  return { id, to };
}

const row = async (id: number) => (await db()).mailMessage.findUniqueOrThrow({ where: { id } });

/** A transport that answers from a script of outcomes ("fail" or "ok"), recording what it was given. */
function scripted(...outcomes: ("fail" | "ok")[]) {
  const calls: MailToSend[] = [];
  const transport: MailTransport = async (message) => {
    calls.push(message);
    const outcome = outcomes[Math.min(calls.length, outcomes.length) - 1];
    if (outcome === "fail") throw new Error(`provider unavailable (call ${calls.length})`);
    return { providerId: `provider-${message.id}` };
  };
  return { transport, calls };
}

describe("deliverDue()", () => {
  it("retries a failed message after a backoff, then sends it: attempts, lastError, status", async () => {
    const { id, to } = await newMessage();
    const { transport, calls } = scripted("fail", "ok");

    const first = await deliverDue({ transport, ids: [id] });
    expect(first).toEqual({ sent: 0, failed: 1, gaveUp: 0, delivering: true });
    const afterFailure = await row(id);
    expect(afterFailure).toMatchObject({ status: "pending", attempts: 1, lastError: "provider unavailable (call 1)", sentAt: null, providerId: null });
    expect(afterFailure.nextAttemptAt.getTime() - nowMs()).toBeGreaterThan(backoffMs(1) - 5_000);
    expect(afterFailure.nextAttemptAt.getTime() - nowMs()).toBeLessThanOrEqual(backoffMs(1));

    // Not due yet: nothing is tried.
    expect(await deliverDue({ transport, ids: [id] })).toEqual({ sent: 0, failed: 0, gaveUp: 0, delivering: true });
    expect(calls).toHaveLength(1);

    advanceClock(backoffMs(1));
    expect(await deliverDue({ transport, ids: [id] })).toEqual({ sent: 1, failed: 0, gaveUp: 0, delivering: true });
    expect(await row(id)).toMatchObject({ status: "sent", attempts: 2, lastError: null, providerId: `provider-${id}`, sentAt: expect.any(Date) });
    expect(calls.map((call) => [call.id, call.to, call.subject, call.text, call.html])).toEqual([
      [id, to, "Hello", "Hello in text", "<p>Hello</p>"],
      [id, to, "Hello", "Hello in text", "<p>Hello</p>"],
    ]);
    // The idempotency key is the same on every attempt of one message.
    expect(idempotencyKey(calls[0]!)).toBe(idempotencyKey(calls[1]!));

    expect(await deliverDue({ transport, ids: [id] })).toMatchObject({ sent: 0, failed: 0 });
    expect(calls).toHaveLength(2);
  });

  // The schedule by its properties, for any number of failed attempts.
  it("retries first within a minute of a failure (with the sweep's delay), never sooner than the one before, never more than 30 minutes apart", () => {
    expect(backoffMs(1) + SWEEP_INTERVAL_MS).toBeLessThanOrEqual(MINUTE);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), (attempts) => {
        expect(backoffMs(attempts)).toBeGreaterThan(0);
        expect(backoffMs(attempts)).toBeLessThanOrEqual(30 * MINUTE);
        expect(backoffMs(attempts + 1)).toBeGreaterThanOrEqual(backoffMs(attempts));
      }),
    );
  });

  it("backs off: the waits grow until they reach 30 minutes, and all attempts together span an outage of hours", () => {
    const waits = Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => backoffMs(i + 1));
    const capped = waits.findIndex((wait) => wait === 30 * MINUTE);
    expect(capped).toBeGreaterThan(0);
    for (let i = 1; i <= capped; i++) expect(waits[i]).toBeGreaterThan(waits[i - 1]!);
    expect(waits.reduce((sum, wait) => sum + wait, 0)).toBeGreaterThanOrEqual(2 * 60 * MINUTE);
  });

  it("reclaims a message whose claim is older than a live attempt can be: STALE_CLAIM_MS exceeds the send timeout", () => {
    expect(STALE_CLAIM_MS).toBeGreaterThan(SEND_TIMEOUT_MS);
    expect(STALE_CLAIM_MS).toBeLessThanOrEqual(5 * MINUTE);
  });

  it("retries a failing message on its schedule: first within a minute, then growing waits of at most 30 minutes, up to a limit", async () => {
    // docs/rules/operations.md#mail-delivery: read off the outbox as deliveries fail, not copied from the
    // code's table.
    const { id } = await newMessage();
    const { transport, calls } = scripted("fail");
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 50; attempt++) {
      expect((await deliverDue({ transport, ids: [id] })).failed).toBe(1);
      const current = await row(id);
      if (current.status === "failed") break;
      expect(current).toMatchObject({ status: "pending", attempts: attempt });
      // The wait from the failed attempt (claimed, then refused at once) to the next one, in whole seconds.
      waits.push(Math.round((current.nextAttemptAt.getTime() - current.claimedAt!.getTime()) / 1000) * 1000);
      // Not tried before it is due; tried once it is.
      advanceClock(current.nextAttemptAt.getTime() - nowMs() - 1_000);
      expect((await deliverDue({ transport, ids: [id] })).failed).toBe(0);
      advanceClock(1_000);
    }
    expect(waits[0]).toBeGreaterThan(0);
    expect(waits[0]).toBeLessThanOrEqual(MINUTE);
    for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1]!);
    expect(waits.at(-1)!).toBeGreaterThan(4 * waits[0]!);
    expect(Math.max(...waits)).toBeLessThanOrEqual(30 * MINUTE);
    // A limit: the message ended failed after a handful of attempts, and nothing tries it again.
    expect((await row(id)).status).toBe("failed");
    expect(calls.length).toBe(waits.length + 1);
    expect(calls.length).toBeLessThanOrEqual(20);
    advanceClock(24 * 60 * MINUTE);
    expect(await deliverDue({ transport, ids: [id] })).toEqual({ sent: 0, failed: 0, gaveUp: 0, delivering: true });
  });

  it(`gives up after ${MAX_ATTEMPTS} attempts: the message stays failed with its last error, and is not tried again`, async () => {
    const { id } = await newMessage();
    const { transport, calls } = scripted("fail");
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const result = await deliverDue({ transport, ids: [id] });
      const last = attempt === MAX_ATTEMPTS;
      expect(result).toEqual({ sent: 0, failed: 1, gaveUp: last ? 1 : 0, delivering: true });
      const current = await row(id);
      expect(current).toMatchObject({ status: last ? "failed" : "pending", attempts: attempt, lastError: `provider unavailable (call ${attempt})` });
      if (!last) {
        // Five seconds early is too early.
        advanceClock(backoffMs(attempt) - 5_000);
        expect((await deliverDue({ transport, ids: [id] })).failed).toBe(0);
        advanceClock(5_000);
      }
    }
    advanceClock(24 * 60 * MINUTE);
    expect(await deliverDue({ transport, ids: [id] })).toEqual({ sent: 0, failed: 0, gaveUp: 0, delivering: true });
    expect(calls).toHaveLength(MAX_ATTEMPTS);
  });

  it("claims a message once when several deliveries run at once: it is sent exactly once", async () => {
    const { id } = await newMessage();
    let calls = 0;
    const slow: MailTransport = async () => {
      calls++;
      await new Promise((done) => setTimeout(done, 50));
      return { providerId: "p" };
    };
    const results = await Promise.all(Array.from({ length: 5 }, () => deliverDue({ transport: slow, ids: [id] })));
    expect(calls).toBe(1);
    expect(results.reduce((sum, result) => sum + result.sent, 0)).toBe(1);
    expect(await row(id)).toMatchObject({ status: "sent", attempts: 1 });
  });

  it("claims again a message whose claim went stale (a worker died while sending), but leaves a live claim alone", async () => {
    const stale = await newMessage();
    const live = await newMessage();
    await write((tx) => tx.mailMessage.update({ where: { id: stale.id }, data: { status: "sending", attempts: 1, claimedAt: new Date(nowMs() - STALE_CLAIM_MS - 1_000) } }));
    await write((tx) => tx.mailMessage.update({ where: { id: live.id }, data: { status: "sending", attempts: 1, claimedAt: new Date(nowMs() - 1_000) } }));
    const { transport, calls } = scripted("ok");
    expect(await deliverDue({ transport, ids: [stale.id, live.id] })).toMatchObject({ sent: 1, failed: 0 });
    expect(calls.map((call) => call.id)).toEqual([stale.id]);
    expect(await row(stale.id)).toMatchObject({ status: "sent", attempts: 2 });
    expect(await row(live.id)).toMatchObject({ status: "sending", attempts: 1 });
  });

  it("marks failed a message whose last attempt was interrupted, among the messages of the run only; a last attempt still under way is left alone", async () => {
    const [{ id }, live, other] = [await newMessage(), await newMessage(), await newMessage()];
    const lastAttempt = (messageId: number, claimedAt: number) =>
      write((tx) => tx.mailMessage.update({ where: { id: messageId }, data: { status: "sending", attempts: MAX_ATTEMPTS, claimedAt: new Date(claimedAt) } }));
    await lastAttempt(id, nowMs() - STALE_CLAIM_MS - 1_000);
    await lastAttempt(live.id, nowMs() - 1_000);
    await lastAttempt(other.id, nowMs() - STALE_CLAIM_MS - 1_000);
    const { transport, calls } = scripted("ok");
    expect(await deliverDue({ transport, ids: [id, live.id] })).toEqual({ sent: 0, failed: 0, gaveUp: 0, delivering: true });
    expect(calls).toHaveLength(0);
    expect(await row(id)).toMatchObject({ status: "failed", attempts: MAX_ATTEMPTS, lastError: "interrupted during the last attempt" });
    expect(await row(live.id)).toMatchObject({ status: "sending", attempts: MAX_ATTEMPTS, lastError: null });
    // Not among the run's messages (delivery right after a response sends that response's mail only).
    expect(await row(other.id)).toMatchObject({ status: "sending", attempts: MAX_ATTEMPTS, lastError: null });
  });

  it("without a transport (no RESEND_API_KEY) claims nothing: the message stays pending in the outbox", async () => {
    const { id } = await newMessage();
    expect(await deliverDue({ transport: null, ids: [id] })).toEqual({ sent: 0, failed: 0, gaveUp: 0, delivering: false });
    expect(await deliverDue({ ids: [id] })).toEqual({ sent: 0, failed: 0, gaveUp: 0, delivering: false });
    expect(await row(id)).toMatchObject({ status: "pending", attempts: 0, claimedAt: null });
  });

  it("talks to Resend's API as Resend documents it: counts its error object as a failed attempt, then sends", async () => {
    // A local stand-in for Resend's HTTP API (the provider's network call is the one thing stood in for):
    // it refuses the first request with the error object Resend answers, and accepts the second.
    const requests: { headers: Record<string, string | string[] | undefined>; body: Record<string, unknown> }[] = [];
    const stub = createServer((req, res) => {
      let raw = "";
      req.on("data", (chunk) => (raw += chunk));
      req.on("end", () => {
        requests.push({ headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
        res.setHeader("Content-Type", "application/json");
        if (requests.length === 1) {
          res.statusCode = 422;
          res.end(JSON.stringify({ statusCode: 422, name: "validation_error", message: "The from address is not verified." }));
        } else {
          res.end(JSON.stringify({ id: "re_4f0c1a" }));
        }
      });
    });
    await new Promise<void>((resolve) => stub.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
    try {
      const { id, to } = await newMessage();
      const transport = resendTransport("re_test_key", "Test <test@example.test>", baseUrl);
      expect(await deliverDue({ transport, ids: [id] })).toMatchObject({ sent: 0, failed: 1 });
      const failedOnce = await row(id);
      expect(failedOnce).toMatchObject({ status: "pending", attempts: 1, providerId: null });
      expect(failedOnce.lastError).toBe("resend validation_error (422): The from address is not verified.");

      advanceClock(backoffMs(1) + 1000);
      expect(await deliverDue({ transport, ids: [id] })).toMatchObject({ sent: 1, failed: 0 });
      expect(await row(id)).toMatchObject({ status: "sent", providerId: "re_4f0c1a" });

      expect(requests).toHaveLength(2);
      const key = idempotencyKey(failedOnce);
      for (const request of requests) {
        expect(request.headers.authorization).toBe("Bearer re_test_key");
        expect(request.headers["idempotency-key"]).toBe(key);
        expect(request.body).toMatchObject({ from: "Test <test@example.test>", to, subject: "Hello", html: "<p>Hello</p>", text: "Hello in text" });
      }
    } finally {
      await new Promise<void>((resolve) => stub.close(() => resolve()));
    }
  });
});

describe("the permission-request e-mail", () => {
  it("renders HTML and plain text naming everyone, with the service's name, the link once and its expiry", async () => {
    const link = "http://localhost:3000/redeem?token=abc_DEF-123";
    const mail = await renderPermissionRequestMail("owner@example.test", {
      targetName: "Olive Owner",
      requesterId: 4,
      requesterName: "Rita <b>Requester</b>",
      requesterEmail: "rita@example.test",
      allowedId: 7,
      allowedName: "Alan Allowed",
      allowedEmail: null,
      requesterIsAllowed: false,
      bundleName: "Garden & pond",
      link,
      expiresAt: formatDateTime(new Date("2026-11-29T14:05:33.000Z")),
    });
    expect(mail.to).toBe("owner@example.test");
    expect(mail.subject).toBe("Rita <b>Requester</b> asks you to let Alan Allowed read your bundle “Garden & pond”");
    expect(mail.html).toMatch(/^<!DOCTYPE html/);
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.html).toContain("Rita &lt;b&gt;Requester&lt;/b&gt;");
    expect(mail.html).not.toContain("<b>Requester</b>");
    for (const text of [
      "Bundle permissions",
      "Hello Olive Owner,",
      // People as the pages show them: the requester's e-mail (the target may see it), the allowed user's id.
      "Rita <b>Requester</b> (rita@example.test) asks you to let Alan Allowed (user 7) read your bundle “Garden & pond”.",
      "expires on 29 Nov 2026, 14:05 UTC",
    ]) {
      expect(mail.text).toContain(text);
    }
    // The plain-text version gives the link once, and uses one kind of quotes.
    expect(mail.text.split(link)).toHaveLength(2);
    expect(mail.text + mail.subject).not.toContain('"');
    expect(mail.text).not.toMatch(/<(p|a|div|table)\b/);
  });

  it("has preview props that render", async () => {
    const preview = await renderPermissionRequestMail("preview@example.test", PermissionRequestEmail.PreviewProps);
    expect(preview.text).toContain(PermissionRequestEmail.PreviewProps.link);
  });
});

describe("npm run cli -- mail:deliver", () => {
  const cli = runCli;

  it("says how many were sent and failed; without RESEND_API_KEY nothing is sent and the outbox keeps the mail", async () => {
    const { id } = await newMessage();
    const [json, text] = await Promise.all([cli("mail:deliver", "--json"), cli("mail:deliver")]);
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ sent: 0, failed: 0 });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^RESEND_API_KEY is not set: nothing sent, \d+ messages? pending in the outbox \(see mail:list\)\.\n$/);
    expect(await row(id)).toMatchObject({ status: "pending", attempts: 0 });
  });
});
