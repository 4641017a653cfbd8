// tokens:prune (docs/rules/operations.md#admin-cli, src/maintenance/prune-tokens.ts), in-process on rows dated
// into the past: each kind of row goes once it is past its keeping time, and a row just inside it stays. The
// clock is never advanced here, because the database is shared with test files running at the same time and
// an advanced clock would prune their live rows; counts are therefore lower bounds (other files' rows may go
// in the same run), and each test checks its own rows one by one.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { nowMs } from "@/clock";
import { db, write } from "@/db/client";
import { AUDIT_EVENT_KEEP_MS, PERMISSION_REQUEST_KEEP_MS, pruneTokens, TOKEN_KEEP_MS } from "@/maintenance/prune-tokens";
import { makeClient, makeUser } from "@/testing/factories";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(nowMs() - ms);
const later = (ms: number) => new Date(nowMs() + ms);
const random = () => randomBytes(16).toString("hex");
/** Which of the named rows are still stored. */
const present = (rows: Record<string, { id: number }>, left: { id: number }[]) =>
  Object.fromEntries(Object.entries(rows).map(([name, row]) => [name, left.some((l) => l.id === row.id)]));

describe("pruneTokens()", () => {
  /** A user, a password client and a grant to hang rows on. */
  async function fixture(grant: { revokedAt?: Date | null; lastUsedAt?: Date } = {}) {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    const clientRow = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
    const grantRow = await write((tx) =>
      tx.grant.create({ data: { clientId: clientRow.id, userId: user.id, grantType: "password", scopes: "readonly", revokedAt: grant.revokedAt ?? null, ...(grant.lastUsedAt ? { lastUsedAt: grant.lastUsedAt } : {}) } }),
    );
    return { user, clientId: clientRow.id, grantId: grantRow.id };
  }
  type Fixture = Awaited<ReturnType<typeof fixture>>;
  const random = () => randomBytes(16).toString("hex");

  const accessToken = (f: Fixture, data: { expiresAt: Date; revokedAt?: Date }) =>
    write((tx) => tx.accessToken.create({ data: { digest: random(), grantId: f.grantId, clientId: f.clientId, userId: f.user.id, scopes: "readonly", ...data } }));
  const refreshToken = (f: Fixture, data: { expiresAt: Date; revokedAt?: Date; usedAt?: Date }) =>
    write((tx) => tx.refreshToken.create({ data: { digest: random(), grantId: f.grantId, clientId: f.clientId, userId: f.user.id, scopes: "readonly", ...data } }));
  const code = (f: Fixture, data: { expiresAt: Date; usedAt?: Date }) =>
    write((tx) => tx.authorizationCode.create({ data: { digest: random(), grantId: f.grantId, clientId: f.clientId, userId: f.user.id, scopes: "readonly", redirectUri: "https://client.example.test/callback", ...data } }));

  it("deletes access tokens expired or revoked more than a day ago, and keeps the others", async () => {
    const f = await fixture();
    const gone = [await accessToken(f, { expiresAt: ago(DAY + MINUTE) }), await accessToken(f, { expiresAt: later(HOUR), revokedAt: ago(DAY + MINUTE) })];
    const kept = [await accessToken(f, { expiresAt: ago(DAY - MINUTE) }), await accessToken(f, { expiresAt: later(HOUR), revokedAt: ago(DAY - MINUTE) }), await accessToken(f, { expiresAt: later(HOUR) })];
    const counts = await pruneTokens();
    expect(counts.access_tokens).toBeGreaterThanOrEqual(2);
    const left = await (await db()).accessToken.findMany({ where: { grantId: f.grantId }, orderBy: { id: "asc" } });
    expect(left.map((row) => row.id)).toEqual(kept.map((row) => row.id));
    expect(gone.every((row) => !left.some((l) => l.id === row.id))).toBe(true);
  });

  it("deletes refresh tokens expired or revoked more than a day ago, never a used one that has not expired", async () => {
    const f = await fixture();
    await refreshToken(f, { expiresAt: ago(DAY + MINUTE), usedAt: ago(40 * DAY) });
    await refreshToken(f, { expiresAt: later(DAY), revokedAt: ago(DAY + MINUTE) });
    const kept = [
      await refreshToken(f, { expiresAt: later(29 * DAY), usedAt: ago(20 * DAY) }), // used long ago, still valid: reuse must be detected
      await refreshToken(f, { expiresAt: ago(DAY - MINUTE), usedAt: ago(30 * DAY) }), // expired, but within the day kept
      await refreshToken(f, { expiresAt: later(30 * DAY) }),
    ];
    const counts = await pruneTokens();
    expect(counts.refresh_tokens).toBeGreaterThanOrEqual(2);
    const left = await (await db()).refreshToken.findMany({ where: { grantId: f.grantId }, orderBy: { id: "asc" } });
    expect(left.map((row) => row.id)).toEqual(kept.map((row) => row.id));
  });

  it("deletes authorization codes expired more than a day ago, used or not", async () => {
    const f = await fixture();
    await code(f, { expiresAt: ago(DAY + MINUTE), usedAt: ago(DAY + 2 * MINUTE) });
    await code(f, { expiresAt: ago(DAY + MINUTE) });
    const kept = [await code(f, { expiresAt: ago(DAY - MINUTE), usedAt: ago(DAY - 2 * MINUTE) }), await code(f, { expiresAt: later(MINUTE) })];
    const counts = await pruneTokens();
    expect(counts.authorization_codes).toBeGreaterThanOrEqual(2);
    const left = await (await db()).authorizationCode.findMany({ where: { grantId: f.grantId }, orderBy: { id: "asc" } });
    expect(left.map((row) => row.id)).toEqual(kept.map((row) => row.id));
  });

  it("deletes a grant revoked more than a day ago once its tokens and codes are gone, in the same run", async () => {
    const emptied = await fixture({ revokedAt: ago(DAY + MINUTE) });
    await accessToken(emptied, { expiresAt: later(HOUR), revokedAt: ago(DAY + MINUTE) });
    await refreshToken(emptied, { expiresAt: later(DAY), revokedAt: ago(DAY + MINUTE) });
    await code(emptied, { expiresAt: ago(2 * DAY), usedAt: ago(2 * DAY) });
    const stillHolding = await fixture({ revokedAt: ago(DAY + MINUTE) });
    await refreshToken(stillHolding, { expiresAt: later(DAY), usedAt: ago(HOUR) }); // not revoked with its grant
    const holdingAccess = await fixture({ revokedAt: ago(DAY + MINUTE) });
    await accessToken(holdingAccess, { expiresAt: later(HOUR) }); // not revoked with its grant
    const holdingCode = await fixture({ revokedAt: ago(DAY + MINUTE) });
    await code(holdingCode, { expiresAt: later(MINUTE) });
    const recent = await fixture({ revokedAt: ago(DAY - MINUTE) });
    const live = await fixture();

    const counts = await pruneTokens();
    expect(counts.grants).toBeGreaterThanOrEqual(1);
    const ids = [emptied, stillHolding, holdingAccess, holdingCode, recent, live].map((f) => f.grantId);
    const left = await (await db()).grant.findMany({ where: { id: { in: ids } }, orderBy: { id: "asc" } });
    expect(left.map((row) => row.id)).toEqual([stillHolding.grantId, holdingAccess.grantId, holdingCode.grantId, recent.grantId, live.grantId]);
  });

  it("deletes a grant that was never revoked once it is idle and empty (an implicit grant whose token expired)", async () => {
    const idle = await fixture({ lastUsedAt: ago(DAY + MINUTE) });
    await accessToken(idle, { expiresAt: ago(DAY + MINUTE) }); // pruned by its own rule in the same run
    const idleButHolding = await fixture({ lastUsedAt: ago(2 * DAY) });
    await refreshToken(idleButHolding, { expiresAt: later(20 * DAY) });
    const emptyButRecent = await fixture({ lastUsedAt: ago(DAY - MINUTE) });

    await pruneTokens();
    const ids = [idle, idleButHolding, emptyButRecent].map((f) => f.grantId);
    const left = await (await db()).grant.findMany({ where: { id: { in: ids } }, orderBy: { id: "asc" } });
    expect(left.map((row) => row.id)).toEqual([idleButHolding.grantId, emptyButRecent.grantId]);
  });

  it("deletes failed password attempts older than a day", async () => {
    const key = `password:cli-test:${random()}`;
    await write((tx) => tx.failedAttempt.createMany({ data: [{ key, createdAt: ago(DAY + MINUTE) }, { key, createdAt: ago(DAY - MINUTE) }, { key, createdAt: ago(MINUTE) }] }));
    const counts = await pruneTokens();
    expect(counts.failed_attempts).toBeGreaterThanOrEqual(1);
    const left = await (await db()).failedAttempt.findMany({ where: { key }, orderBy: { createdAt: "asc" } });
    expect(left.map((row) => row.createdAt.getTime() > nowMs() - DAY)).toEqual([true, true]);
  });

  it("deletes permission requests 30 days after they ended, or expired when they never ended", async () => {
    const target = await makeUser();
    const allowed = await makeUser();
    const bundle = await write((tx) => tx.bundle.create({ data: { name: "Shared", ownerId: target.id } }));
    const request = (data: { status: string; expiresAt: Date; endedAt?: Date; deletedAt?: Date }) =>
      write((tx) =>
        tx.permissionRequest.create({
          data: {
            tokenDigest: random(),
            bundleId: bundle.id,
            userAllowedId: allowed.id,
            userTargetId: target.id,
            requestedById: allowed.id,
            pendingKey: data.status === "pending" ? `${bundle.id}:${allowed.id}:${target.id}:${random()}` : null,
            ...data,
          },
        }),
      );
    const redeemedLongAgo = await request({ status: "redeemed", expiresAt: ago(35 * DAY), endedAt: ago(31 * DAY) });
    await request({ status: "declined", expiresAt: later(DAY), endedAt: ago(31 * DAY), deletedAt: ago(31 * DAY) });
    await request({ status: "pending", expiresAt: ago(31 * DAY) });
    const kept = [
      await request({ status: "redeemed", expiresAt: ago(35 * DAY), endedAt: ago(29 * DAY) }), // ended recently, though long expired
      await request({ status: "pending", expiresAt: ago(29 * DAY) }),
      await request({ status: "pending", expiresAt: later(7 * DAY) }),
    ];
    // Their mail goes with them, and is counted.
    const mailOf = (permissionRequestId: number) =>
      write((tx) => tx.mailMessage.create({ data: { to: target.email, subject: "s", text: "t", html: "<p>t</p>", status: "sent", permissionRequestId } }));
    const mails = { ofGone: await mailOf(redeemedLongAgo.id), ofKept: await mailOf(kept[0]!.id) };
    const counts = await pruneTokens();
    expect(counts.permission_requests).toBeGreaterThanOrEqual(3);
    expect(counts.mail_messages).toBeGreaterThanOrEqual(1);
    const left = await (await db()).permissionRequest.findMany({ where: { bundleId: bundle.id }, orderBy: { id: "asc" } });
    expect(left.map((row) => row.id)).toEqual(kept.map((row) => row.id));
    const mailLeft = await (await db()).mailMessage.findMany({ where: { id: { in: [mails.ofGone.id, mails.ofKept.id] } } });
    expect(present(mails, mailLeft)).toEqual({ ofGone: false, ofKept: true });
  });
});


describe("pruneTokens(): the other kinds of row", () => {
  const mail = (data: { createdAt?: Date; status?: string; permissionRequestId?: number; accountTokenId?: number }) =>
    write((tx) => tx.mailMessage.create({ data: { to: `${random()}@example.test`, subject: "s", text: "t", html: "<p>t</p>", ...data } }));

  it("deletes account tokens a day after they expired or were used, with their mail, and counts that mail", async () => {
    const user = await makeUser();
    const token = (data: { expiresAt: Date; usedAt?: Date }) =>
      write((tx) => tx.accountToken.create({ data: { digest: random(), userId: user.id, purpose: "verify_email", email: user.email, ...data } }));
    const tokens = {
      expiredLongAgo: await token({ expiresAt: ago(DAY + MINUTE) }),
      usedLongAgo: await token({ expiresAt: later(DAY), usedAt: ago(DAY + MINUTE) }),
      expiredRecently: await token({ expiresAt: ago(DAY - MINUTE) }),
      usedRecently: await token({ expiresAt: later(DAY), usedAt: ago(DAY - MINUTE) }),
      live: await token({ expiresAt: later(DAY) }),
    };
    const mails = {
      ofExpired: await mail({ accountTokenId: tokens.expiredLongAgo.id }),
      ofUsed: await mail({ accountTokenId: tokens.usedLongAgo.id }),
      ofLive: await mail({ accountTokenId: tokens.live.id }),
    };
    const counts = await pruneTokens();
    expect(counts.account_tokens).toBeGreaterThanOrEqual(2);
    expect(counts.mail_messages).toBeGreaterThanOrEqual(2);
    const prisma = await db();
    expect(present(tokens, await prisma.accountToken.findMany({ where: { userId: user.id } }))).toEqual({
      expiredLongAgo: false,
      usedLongAgo: false,
      expiredRecently: true,
      usedRecently: true,
      live: true,
    });
    expect(present(mails, await prisma.mailMessage.findMany({ where: { id: { in: Object.values(mails).map((m) => m.id) } } }))).toEqual({
      ofExpired: false,
      ofUsed: false,
      ofLive: true,
    });
  });

  it("deletes mail linked to nothing 30 days after it was written, never one being sent, and counts it", async () => {
    const mails = {
      oldSent: await mail({ createdAt: ago(PERMISSION_REQUEST_KEEP_MS + MINUTE), status: "sent" }),
      oldFailed: await mail({ createdAt: ago(PERMISSION_REQUEST_KEEP_MS + MINUTE), status: "failed" }),
      oldSending: await mail({ createdAt: ago(PERMISSION_REQUEST_KEEP_MS + MINUTE), status: "sending" }),
      young: await mail({ createdAt: ago(PERMISSION_REQUEST_KEEP_MS - MINUTE), status: "sent" }),
    };
    const counts = await pruneTokens();
    expect(counts.mail_messages).toBeGreaterThanOrEqual(2);
    const left = await (await db()).mailMessage.findMany({ where: { id: { in: Object.values(mails).map((m) => m.id) } } });
    expect(present(mails, left)).toEqual({ oldSent: false, oldFailed: false, oldSending: true, young: true });
  });

  it("keeps an old message that announces a request or an account token still kept", async () => {
    const user = await makeUser();
    const token = await write((tx) =>
      tx.accountToken.create({ data: { digest: random(), userId: user.id, purpose: "verify_email", email: user.email, expiresAt: later(DAY) } }),
    );
    const linked = await mail({ createdAt: ago(PERMISSION_REQUEST_KEEP_MS + DAY), status: "sent", accountTokenId: token.id });
    await pruneTokens();
    expect(await (await db()).mailMessage.count({ where: { id: linked.id } })).toBe(1);
  });

  it("deletes device authorizations, pushed requests and initial access tokens a day after they expired", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    const prisma = await db();
    const clientId = (await prisma.client.findUniqueOrThrow({ where: { clientId: client.client_id } })).id;
    const device = (expiresAt: Date) =>
      write((tx) => tx.deviceAuthorization.create({ data: { deviceCodeDigest: random(), userCode: random().slice(0, 12), clientId, scopes: "readonly", expiresAt } }));
    const pushed = (expiresAt: Date) => write((tx) => tx.pushedAuthorizationRequest.create({ data: { digest: random(), clientId, params: "{}", expiresAt } }));
    const registration = (expiresAt: Date) => write((tx) => tx.registrationToken.create({ data: { digest: random(), expiresAt } }));
    const devices = { old: await device(ago(TOKEN_KEEP_MS + MINUTE)), recent: await device(ago(TOKEN_KEEP_MS - MINUTE)), live: await device(later(MINUTE)) };
    const requests = { old: await pushed(ago(TOKEN_KEEP_MS + MINUTE)), recent: await pushed(ago(TOKEN_KEEP_MS - MINUTE)), live: await pushed(later(MINUTE)) };
    const registrations = {
      old: await registration(ago(TOKEN_KEEP_MS + MINUTE)),
      recent: await registration(ago(TOKEN_KEEP_MS - MINUTE)),
      live: await registration(later(MINUTE)),
    };
    const counts = await pruneTokens();
    expect([counts.device_authorizations, counts.pushed_requests, counts.registration_tokens].every((n) => n >= 1)).toBe(true);
    const kept = { old: false, recent: true, live: true };
    expect(present(devices, await prisma.deviceAuthorization.findMany({ where: { clientId } }))).toEqual(kept);
    expect(present(requests, await prisma.pushedAuthorizationRequest.findMany({ where: { clientId } }))).toEqual(kept);
    const ids = Object.values(registrations).map((r) => r.id);
    expect(present(registrations, await prisma.registrationToken.findMany({ where: { id: { in: ids } } }))).toEqual(kept);
  });

  it("deletes DPoP proofs' and client assertions' jti rows as soon as they expired, not before", async () => {
    const proof = (expiresAt: Date) => write((tx) => tx.dpopProof.create({ data: { key: random(), expiresAt } }));
    const assertion = (expiresAt: Date) => write((tx) => tx.clientAssertion.create({ data: { key: random(), expiresAt } }));
    const proofs = { expired: await proof(ago(MINUTE)), live: await proof(later(MINUTE)) };
    const assertions = { expired: await assertion(ago(MINUTE)), live: await assertion(later(MINUTE)) };
    const counts = await pruneTokens();
    expect(counts.dpop_proofs).toBeGreaterThanOrEqual(1);
    expect(counts.client_assertions).toBeGreaterThanOrEqual(1);
    const prisma = await db();
    const kept = { expired: false, live: true };
    expect(present(proofs, await prisma.dpopProof.findMany({ where: { id: { in: [proofs.expired.id, proofs.live.id] } } }))).toEqual(kept);
    expect(present(assertions, await prisma.clientAssertion.findMany({ where: { id: { in: [assertions.expired.id, assertions.live.id] } } }))).toEqual(kept);
  });

  it("deletes security events 90 days after they happened", async () => {
    const user = await makeUser();
    const event = (at: Date) => write((tx) => tx.auditEvent.create({ data: { type: "signin.succeeded", userId: user.id, at } }));
    const events = { old: await event(ago(AUDIT_EVENT_KEEP_MS + MINUTE)), young: await event(ago(AUDIT_EVENT_KEEP_MS - MINUTE)) };
    const counts = await pruneTokens();
    expect(counts.audit_events).toBeGreaterThanOrEqual(1);
    expect(present(events, await (await db()).auditEvent.findMany({ where: { userId: user.id } }))).toEqual({ old: false, young: true });
  });

  it("says how many of each kind it removed, every kind named", async () => {
    expect(Object.keys(await pruneTokens()).sort()).toEqual(
      [
        "access_tokens",
        "account_tokens",
        "audit_events",
        "authorization_codes",
        "client_assertions",
        "device_authorizations",
        "dpop_proofs",
        "failed_attempts",
        "grants",
        "logout_deliveries",
        "mail_messages",
        "permission_requests",
        "pushed_requests",
        "refresh_tokens",
        "registration_tokens",
        "session_clients",
      ].sort(),
    );
  });
});
