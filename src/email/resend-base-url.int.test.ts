// RESEND_BASE_URL (the Resend SDK's own variable; docs/rules/operations.md#mail-delivery): with it and
// RESEND_API_KEY set, the outbox's own transport talks to that API, here a local stand-in for Resend.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("RESEND_BASE_URL", () => {
  let stub: Server;
  const requests: Array<{ path: string; authorization?: string; key?: string; body: Record<string, unknown> }> = [];

  beforeAll(async () => {
    stub = createServer((req, res) => {
      let raw = "";
      req.on("data", (chunk) => (raw += chunk));
      req.on("end", () => {
        requests.push({ path: req.url ?? "", authorization: req.headers.authorization, key: req.headers["idempotency-key"] as string | undefined, body: JSON.parse(raw) as Record<string, unknown> });
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify({ id: `re_${requests.length}` }));
      });
    });
    await new Promise<void>((resolve) => stub.listen(0, "127.0.0.1", resolve));
    // Read once, at this worker's first env().
    process.env.RESEND_API_KEY = "re_test_key_for_the_stand_in";
    process.env.RESEND_BASE_URL = `http://127.0.0.1:${(stub.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => stub.close(() => resolve())));

  it("sends the outbox through the API it names, with the key and an idempotency key", async () => {
    const { write, db } = await import("@/db/client");
    const { enqueueMail } = await import("@/email/outbox");
    const { deliverDue } = await import("@/email/deliver");
    const id = await write((tx) => enqueueMail(tx, { to: "stand-in@example.test", subject: "Via the stand-in", text: "text", html: "<p>html</p>" }));
    expect(await deliverDue({ ids: [id] })).toEqual({ sent: 1, failed: 0, gaveUp: 0, delivering: true });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ path: "/emails", authorization: "Bearer re_test_key_for_the_stand_in", key: expect.stringMatching(new RegExp(`^mail-${id}-\\d+$`)) });
    expect(requests[0]!.body).toMatchObject({ to: "stand-in@example.test", subject: "Via the stand-in" });
    expect(await (await db()).mailMessage.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "sent", providerId: "re_1" });
  });
});
