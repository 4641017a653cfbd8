import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { recordEvent, recordEventInTx } from "@/audit/record-event";
import { runWithRequestContext } from "@/http/request-context";
import { db, write } from "@/db/client";

async function eventsOfType(type: string) {
  return (await db()).auditEvent.findMany({ where: { type }, orderBy: { id: "asc" } });
}

describe("audit events", () => {
  it("takes the client address from the request context when none is given", async () => {
    // (The suite's other files record events for real users, user 41 among them: this one is found by its reason.)
    const reason = `bad password ${randomBytes(6).toString("hex")}`;
    await runWithRequestContext({ ip: "203.0.113.7" }, () => recordEvent({ type: "signin.failed", userId: 41, detail: { reason } }));
    const [row] = (await eventsOfType("signin.failed")).filter((event) => event.detail?.includes(reason));
    expect(row).toMatchObject({ type: "signin.failed", userId: 41, ip: "203.0.113.7" });
    expect(JSON.parse(row!.detail!)).toEqual({ reason });
  });

  it("rolls back with the change it records", async () => {
    await expect(
      write(async (tx) => {
        await recordEventInTx(tx, { type: "client.deleted", clientId: "rolled-back-client" });
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    expect((await eventsOfType("client.deleted")).some((event) => event.clientId === "rolled-back-client")).toBe(false);
  });

  it("never stores a token that a detail string carries in a path or query", async () => {
    // Found by a reason of its own, as above: other files revoke tokens of real users too.
    const reason = `revoked ${randomBytes(6).toString("hex")}`;
    await recordEvent({ type: "token.revoked", userId: 42, detail: { reason, path: "/api/oauth2token/abcDEF123-secret/?code=xyz" } });
    const [row] = (await eventsOfType("token.revoked")).filter((event) => event.detail?.includes(reason));
    expect(row!.detail).toContain("/api/oauth2token/");
    expect(row!.detail).not.toContain("abcDEF123-secret");
    expect(row!.detail).not.toContain("xyz");
  });
});
