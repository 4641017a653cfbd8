// Reading the audit log and an event in words (docs/rules/operations.md#audit-log,
// docs/rules/pages.md#security-activity), in-process: what `audit:list` and /settings/security are given.
import { describe, expect, it } from "vitest";
import { describeEvent, readableAddress } from "@/audit/describe-event";
import { AUDIT_EVENT_TYPES } from "@/audit/events";
import { listAuditEvents, ownSecurityEvents } from "@/audit/list-events";
import { recordEvent } from "@/audit/record-event";
import { advanceClock, nowMs } from "@/clock";
import { db, write } from "@/db/client";
import { runWithRequestContext } from "@/http/request-context";
import { makeClient, makeUser } from "@/testing/factories";

describe("audit:list's events", () => {
  it("lists one person's events newest first with their e-mail, client, address and detail, filtered by type", async () => {
    const user = await makeUser();
    const other = await makeUser();
    await recordEvent({ type: "signin.failed", userId: user.id, ip: "192.0.2.1", detail: { reason: "bad password" } });
    advanceClock(1000);
    await recordEvent({ type: "signin.succeeded", userId: user.id, clientId: "some-client", ip: "192.0.2.2" });
    advanceClock(1000);
    await recordEvent({ type: "signin.succeeded", userId: user.id, ip: "192.0.2.3" });
    await recordEvent({ type: "signin.succeeded", userId: other.id, ip: "192.0.2.4" });

    const mine = await listAuditEvents({ userId: user.id, limit: 10 });
    expect(mine.map((event) => [event.type, event.ip])).toEqual([
      ["signin.succeeded", "192.0.2.3"],
      ["signin.succeeded", "192.0.2.2"],
      ["signin.failed", "192.0.2.1"],
    ]);
    expect(mine[1]).toEqual({ type: "signin.succeeded", at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/), user: user.email, client: "some-client", ip: "192.0.2.2", detail: null });
    expect(mine[2]!.detail).toEqual({ reason: "bad password" });
    expect(await listAuditEvents({ userId: user.id, type: "signin.failed", limit: 10 })).toHaveLength(1);
    expect((await listAuditEvents({ userId: user.id, limit: 2 })).map((event) => event.ip)).toEqual(["192.0.2.3", "192.0.2.2"]);
  });

  it("orders events by when they happened, not by when they were written", async () => {
    const user = await makeUser();
    const at = nowMs();
    await write((tx) => tx.auditEvent.create({ data: { type: "signin.failed", userId: user.id, ip: "198.51.100.20", at: new Date(at) } }));
    await write((tx) => tx.auditEvent.create({ data: { type: "signin.failed", userId: user.id, ip: "198.51.100.10", at: new Date(at - 3_600_000) } }));
    expect((await listAuditEvents({ userId: user.id, limit: 10 })).map((event) => event.ip)).toEqual(["198.51.100.20", "198.51.100.10"]);
    expect((await ownSecurityEvents(user.id)).map((event) => event.ip)).toEqual(["198.51.100.20", "198.51.100.10"]);
  });

  it("orders events of the same instant by when they were recorded", async () => {
    const user = await makeUser();
    const at = new Date(nowMs());
    await write((tx) => tx.auditEvent.createMany({ data: ["198.51.100.1", "198.51.100.2", "198.51.100.3"].map((ip) => ({ type: "signin.failed", userId: user.id, ip, at })) }));
    const listed = await listAuditEvents({ userId: user.id, limit: 10 });
    expect(listed.map((event) => event.ip)).toEqual(["198.51.100.3", "198.51.100.2", "198.51.100.1"]);
    const own = await ownSecurityEvents(user.id);
    expect(own.map((event) => event.ip)).toEqual(["198.51.100.3", "198.51.100.2", "198.51.100.1"]);
  });

  it("names a user who is gone by id, an event without a user as null, and shows unreadable detail as null", async () => {
    const gone = await makeUser();
    const prisma = await db();
    const type = "signing_key.revoked";
    await write((tx) => tx.auditEvent.create({ data: { type, userId: gone.id, detail: "{not json" } }));
    await write((tx) => tx.user.delete({ where: { id: gone.id } }));
    const [row] = await listAuditEvents({ userId: gone.id, limit: 1 });
    expect(row).toMatchObject({ user: `user ${gone.id}`, detail: null });
    await recordEvent({ type, ip: "203.0.113.99" });
    const latest = (await listAuditEvents({ type, limit: 50 })).find((event) => event.ip === "203.0.113.99");
    expect(latest).toMatchObject({ user: null, client: null });
    expect(await prisma.auditEvent.count({ where: { userId: gone.id } })).toBe(1);
  });
});

describe("a person's own security events", () => {
  it("names the app of each event, null when there is none or it is gone, detail {} when there is none", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: (await makeUser()).id, name: "Photo Printer" });
    await recordEvent({ type: "token.issued", userId: user.id, clientId: client.client_id, detail: { grant_type: "password" } });
    advanceClock(1000);
    await recordEvent({ type: "token.issued", userId: user.id, clientId: "deleted-client-id" });
    advanceClock(1000);
    await recordEvent({ type: "signin.succeeded", userId: user.id, ip: null });
    const own = await ownSecurityEvents(user.id);
    expect(own.map(({ type, appName, detail, ip }) => ({ type, appName, detail, ip }))).toEqual([
      { type: "signin.succeeded", appName: null, detail: {}, ip: null },
      { type: "token.issued", appName: null, detail: {}, ip: null },
      { type: "token.issued", appName: "Photo Printer", detail: { grant_type: "password" }, ip: null },
    ]);
    expect(own[0]!.at).toBeInstanceOf(Date);
    expect(typeof own[0]!.id).toBe("number");
    expect(describeEvent(own[2]!)).toBe("“Photo Printer” got access to your account with your password.");
    expect(await ownSecurityEvents(user.id, 1)).toHaveLength(1);
    expect(await ownSecurityEvents((await makeUser()).id)).toEqual([]);
  });

  it("shows at most 50 events by default", async () => {
    const user = await makeUser();
    await write((tx) => tx.auditEvent.createMany({ data: Array.from({ length: 51 }, () => ({ type: "signin.failed", userId: user.id })) }));
    expect(await ownSecurityEvents(user.id)).toHaveLength(50);
  });
});

describe("recorded events", () => {
  it("keep an address given as null, and take the request's when none is given", async () => {
    const user = await makeUser();
    await runWithRequestContext({ ip: "203.0.113.7" }, async () => {
      await recordEvent({ type: "signin.failed", userId: user.id, ip: null });
      await recordEvent({ type: "signin.failed", userId: user.id });
    });
    const rows = await (await db()).auditEvent.findMany({ where: { userId: user.id }, orderBy: { id: "asc" } });
    expect(rows.map((row) => row.ip)).toEqual([null, "203.0.113.7"]);
  });

  it("store no detail for an empty one, and cut a detail string to 200 characters; numbers and flags as given", async () => {
    const user = await makeUser();
    await recordEvent({ type: "signin.failed", userId: user.id, detail: {} });
    await recordEvent({ type: "signin.failed", userId: user.id, detail: { note: "x".repeat(300), tries: 3, remembered: false, none: null } });
    await recordEvent({ type: "signin.failed", userId: user.id, detail: { note: "y".repeat(200) } });
    const rows = await (await db()).auditEvent.findMany({ where: { userId: user.id }, orderBy: { id: "asc" } });
    expect(rows[0]!.detail).toBeNull();
    expect(JSON.parse(rows[1]!.detail!)).toEqual({ note: "x".repeat(200), tries: 3, remembered: false, none: null });
    expect(JSON.parse(rows[2]!.detail!)).toEqual({ note: "y".repeat(200) });
    expect(rows[0]).toMatchObject({ clientId: null, type: "signin.failed" });
  });
});

describe("events in words", () => {
  it("says how an app got access for each grant type, and nothing more for an unknown one", async () => {
    const words = (grant_type: string) => describeEvent({ type: "token.issued", appName: "Photo Printer", detail: { grant_type } });
    expect(words("authorization_code")).toBe("“Photo Printer” got access to your account after you approved it.");
    expect(words("implicit")).toBe("“Photo Printer” got access to your account in your browser (implicit grant).");
    expect(words("password")).toBe("“Photo Printer” got access to your account with your password.");
    expect(words("client_credentials")).toBe("“Photo Printer” got access to your account for its owner (client credentials).");
    expect(words("refresh_token")).toBe("“Photo Printer” got access to your account by refreshing.");
    expect(words("urn:ietf:params:oauth:grant-type:device_code")).toBe("“Photo Printer” got access to your account on a device you approved.");
    expect(words("something_new")).toBe("“Photo Printer” got access to your account.");
    expect(describeEvent({ type: "token.issued", appName: null, detail: {} })).toBe("an app got access to your account.");
  });

  it("says how access ended and which limit was reached, with a fallback when the event does not say", () => {
    const app = "Photo Printer";
    expect(describeEvent({ type: "token.revoked", appName: app, detail: { via: "revocation endpoint" } })).toBe("“Photo Printer” lost its access to your account (revocation endpoint).");
    expect(describeEvent({ type: "token.revoked", appName: app, detail: {} })).toBe("“Photo Printer” lost its access to your account (revoked).");
    expect(describeEvent({ type: "rate_limited", appName: null, detail: { limit: "password grant" } })).toBe("Too many attempts (password grant): further attempts were refused for a while.");
    expect(describeEvent({ type: "rate_limited", appName: null, detail: {} })).toBe("Too many attempts (a limit): further attempts were refused for a while.");
    expect(describeEvent({ type: "something.else", appName: null, detail: {} })).toBe("Security event “something.else”.");
  });

  it("names the app in every event about one", () => {
    const appEvents = ["token.refreshed", "token.reuse_detected", "code.reused", "consent.granted", "consent.revoked", "client.created", "client.secret_rotated", "client.deleted"];
    for (const type of appEvents) expect(describeEvent({ type, appName: "Photo Printer", detail: {} }), type).toContain("“Photo Printer”");
    // Every event type its own words (none falls through to another's).
    const texts = new Set(AUDIT_EVENT_TYPES.map((type) => describeEvent({ type, appName: "Photo Printer", detail: {} })));
    expect(texts.size).toBe(AUDIT_EVENT_TYPES.length);
  });
});

describe("addresses as people read them", () => {
  it("unwraps only a whole IPv4-mapped address, and calls only loopback addresses this computer", () => {
    expect(readableAddress("2001:db8::ffff:192.0.2.1")).toBe("2001:db8::ffff:192.0.2.1");
    expect(readableAddress("::ffff:192.0.2.1%eth0")).toBe("::ffff:192.0.2.1%eth0");
    expect(readableAddress("::FFFF:192.0.2.1")).toBe("192.0.2.1");
    expect(readableAddress("10.127.0.1")).toBe("10.127.0.1");
    expect(readableAddress("127.0.0.53")).toBe("this computer (127.0.0.53)");
  });
});
