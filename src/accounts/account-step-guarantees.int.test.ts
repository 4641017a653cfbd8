// The guarantees of the account steps behind the mailed links (docs/rules/accounts.md#unconfirmed-accounts,
// docs/rules/accounts.md#password-reset, docs/rules/accounts.md#sign-up-and-confirmation), each on its own:
// a confirmation or a reset undoes what belongs to that account and nothing of anyone else's, records what it
// undid with the counts, a confirmation link is not a reset and a reset link is not a confirmation, a link
// made useless by a reset says what happened, and the account mails say when their link expires, keep a copy
// without the link, and count only the mails to their own address.
import { afterEach, describe, expect, it } from "vitest";
import { nowMs, resetClock } from "@/clock";
import { ACCOUNT_MAIL_LIMIT, RESET_PASSWORD_TTL_MS, VERIFY_EMAIL_TTL_MS } from "@/accounts/account-mail";
import { issueAccountToken } from "@/accounts/account-tokens";
import { emailConfirmed } from "@/accounts/confirmed";
import { takeAccountStep } from "@/accounts/lifecycle";
import { requestPasswordReset } from "@/accounts/request-password-reset";
import { resetPassword } from "@/accounts/reset-password";
import { signUp, SIGNUP_LIMIT_PER_ADDRESS } from "@/accounts/sign-up";
import { confirmEmail, describeVerification, resendVerification } from "@/accounts/verify-email";
import { formatDateTime } from "@/format/date-time";
import { db, write } from "@/db/client";
import { randomSecret } from "@/secrets";
import { clientRow, consentRow, grantRow, makeUser, uniqueEmail } from "@/testing/factories";
import { hashPassword } from "@/users/passwords";

afterEach(() => resetClock());

const ipFor = (() => {
  const base = Math.floor(Math.random() * 200);
  let next = 0;
  return () => `10.${base}.${Math.floor(++next / 250) + 150}.${next % 250}`;
})();

/** A person with an own client, a grant with its two tokens to another client, a consent, an approved device
 * code not yet collected, a failed sign-in counted against the address, and a reset link. */
async function holdings(confirmed: boolean) {
  const user = await makeUser();
  await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: confirmed ? new Date(nowMs()) : null } }));
  const owner = await makeUser();
  const app = await clientRow({ ownerId: owner.id });
  const own = await clientRow({ ownerId: user.id });
  const grant = await grantRow({ userId: user.id, clientId: app.id });
  await consentRow({ userId: user.id, clientId: app.id });
  const device = await write((tx) =>
    tx.deviceAuthorization.create({
      data: { deviceCodeDigest: randomSecret(), userCode: randomSecret(12), clientId: app.id, scopes: "readonly", status: "approved", userId: user.id, expiresAt: new Date(nowMs() + 600_000) },
    }),
  );
  await write((tx) => tx.failedAttempt.createMany({ data: [{ key: `signin:${user.email}` }, { key: `signin:${user.email}:10.0.0.1` }, { key: `signin:${user.email}x` }] }));
  const resetLink = await link(user, "reset_password");
  return { user, app, own, grant, device, resetLink };
}
type Holdings = Awaited<ReturnType<typeof holdings>>;

async function link(user: { id: number; email: string }, purpose: "verify_email" | "reset_password") {
  const token = randomSecret();
  await write((tx) => issueAccountToken(tx, { token, userId: user.id, purpose, email: user.email, ttlMs: 3600_000 }));
  return token;
}

/** What is left of `h`'s holdings. */
async function left(h: Holdings) {
  const d = await db();
  return {
    grantRevoked: (await d.grant.findUniqueOrThrow({ where: { id: h.grant.grantId } })).revokedAt !== null,
    liveTokens: (await d.accessToken.count({ where: { userId: h.user.id, revokedAt: null } })) + (await d.refreshToken.count({ where: { userId: h.user.id, revokedAt: null } })),
    consents: await d.consent.count({ where: { userId: h.user.id } }),
    device: (await d.deviceAuthorization.findUniqueOrThrow({ where: { id: h.device.id } })).status,
    ownClient: (await d.client.count({ where: { id: h.own.id } })) === 1,
    failedSignIns: (await d.failedAttempt.findMany({ where: { key: { startsWith: `signin:${h.user.email}` } } })).map((row) => row.key).sort(),
    resetLinkUsed: (await d.accountToken.findFirstOrThrow({ where: { userId: h.user.id, purpose: "reset_password" }, orderBy: { id: "asc" } })).usedAt !== null,
    sessionVersion: (await d.user.findUniqueOrThrow({ where: { id: h.user.id } })).sessionVersion,
  };
}

const untouched = (h: Holdings) => ({
  grantRevoked: false,
  liveTokens: 2,
  consents: 1,
  device: "approved",
  ownClient: true,
  failedSignIns: [`signin:${h.user.email}`, `signin:${h.user.email}:10.0.0.1`, `signin:${h.user.email}x`].sort(),
  resetLinkUsed: false,
  sessionVersion: 0,
});

const eventsOf = async (userId: number) =>
  (await (await db()).auditEvent.findMany({ where: { userId }, orderBy: { id: "asc" } })).map((event) => ({ type: event.type, clientId: event.clientId, detail: event.detail ? (JSON.parse(event.detail) as unknown) : null }));

describe("a password reset", () => {
  it("undoes everything of its own account and nothing of another's, and records the counts", async () => {
    const mine = await holdings(true);
    const theirs = await holdings(true);
    const outcome = await takeAccountStep(await link(mine.user, "reset_password"), { purpose: "reset_password", passwordHash: await hashPassword("a new password here") });
    expect(outcome).toMatchObject({ state: "done", firstConfirmation: false });
    expect(await left(mine)).toEqual({
      grantRevoked: true,
      liveTokens: 0,
      consents: 0,
      device: "denied",
      ownClient: true,
      failedSignIns: [`signin:${mine.user.email}x`],
      resetLinkUsed: true,
      sessionVersion: 1,
    });
    expect(await left(theirs)).toEqual(untouched(theirs));
    const events = await eventsOf(mine.user.id);
    expect(events).toContainEqual({ type: "token.revoked", clientId: null, detail: { reason: "password reset", grants: 1, tokens: 2, device_approvals: 1 } });
    expect(events).toContainEqual({ type: "consent.revoked", clientId: null, detail: { reason: "password reset", consents: 1 } });
  });

  it("of an unconfirmed account confirms it, says so, and records nothing revoked when nothing was held", async () => {
    const user = await makeUser();
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: null } }));
    const outcome = await takeAccountStep(await link(user, "reset_password"), { purpose: "reset_password", passwordHash: await hashPassword("a new password here") });
    expect(outcome).toMatchObject({ state: "done", firstConfirmation: true });
    const events = await eventsOf(user.id);
    expect(events.map((event) => event.type)).toEqual(["account.confirmed", "password.reset"]);
    expect(events[0]!.detail).toEqual({ via: "password reset" });
  });
});

describe("what a password reset records as revoked", () => {
  /** Resets the password of `user` and returns its token.revoked event's detail, or null. */
  async function resetRecords(user: { id: number; email: string }) {
    await takeAccountStep(await link(user, "reset_password"), { purpose: "reset_password", passwordHash: await hashPassword("a new password here") });
    const event = await (await db()).auditEvent.findFirst({ where: { userId: user.id, type: "token.revoked" } });
    return event ? (JSON.parse(event.detail!) as unknown) : null;
  }

  it("counts whatever was live: a device approval alone, a refresh token alone, an access token alone", async () => {
    const owner = await makeUser();
    const app = await clientRow({ ownerId: owner.id });
    const deviceOnly = await makeUser();
    await write((tx) =>
      tx.deviceAuthorization.create({
        data: { deviceCodeDigest: randomSecret(), userCode: randomSecret(12), clientId: app.id, scopes: "readonly", status: "approved", userId: deviceOnly.id, expiresAt: new Date(nowMs() + 600_000) },
      }),
    );
    expect(await resetRecords(deviceOnly)).toEqual({ reason: "password reset", grants: 0, tokens: 0, device_approvals: 1 });
    // A grant revoked earlier with one of its tokens left live.
    const refreshOnly = await makeUser();
    const a = await grantRow({ userId: refreshOnly.id, clientId: app.id });
    await write(async (tx) => {
      await tx.grant.update({ where: { id: a.grantId }, data: { revokedAt: new Date(nowMs()) } });
      await tx.accessToken.updateMany({ where: { grantId: a.grantId }, data: { revokedAt: new Date(nowMs()) } });
    });
    expect(await resetRecords(refreshOnly)).toEqual({ reason: "password reset", grants: 0, tokens: 1, device_approvals: 0 });
    const accessOnly = await makeUser();
    const b = await grantRow({ userId: accessOnly.id, clientId: app.id });
    await write(async (tx) => {
      await tx.grant.update({ where: { id: b.grantId }, data: { revokedAt: new Date(nowMs()) } });
      await tx.refreshToken.updateMany({ where: { grantId: b.grantId }, data: { revokedAt: new Date(nowMs()) } });
    });
    expect(await resetRecords(accessOnly)).toEqual({ reason: "password reset", grants: 0, tokens: 1, device_approvals: 0 });
  });
});

describe("the first confirmation by the mailed link", () => {
  it("undoes everything of its own account but signs out nothing and leaves reset links alone; nothing of another's", async () => {
    const mine = await holdings(false);
    const theirs = await holdings(false);
    const outcome = await takeAccountStep(await link(mine.user, "verify_email"), { purpose: "verify_email" });
    expect(outcome).toMatchObject({ state: "done", firstConfirmation: true });
    expect(await left(mine)).toEqual({ ...untouched(mine), grantRevoked: true, liveTokens: 0, consents: 0, device: "denied", ownClient: false });
    expect(await left(theirs)).toEqual(untouched(theirs));
    const events = await eventsOf(mine.user.id);
    expect(events).toContainEqual({ type: "account.confirmed", clientId: null, detail: { via: "link" } });
    expect(events).toContainEqual({ type: "client.deleted", clientId: mine.own.client_id, detail: { via: "address confirmed" } });
    expect(events).toContainEqual({ type: "token.revoked", clientId: null, detail: { reason: "address confirmed", grants: 1, tokens: 2, device_approvals: 1 } });
    expect(events).toContainEqual({ type: "consent.revoked", clientId: null, detail: { reason: "address confirmed", consents: 1 } });
  });

  it("used after a reset confirmed the address: says confirmed and undoes nothing more", async () => {
    const user = await makeUser();
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: null } }));
    const verify = await link(user, "verify_email");
    expect(await resetPassword({ token: await link(user, "reset_password"), password: "a new password here" })).toEqual({ state: "reset", email: user.email });
    const owner = await makeUser();
    const app = await clientRow({ ownerId: owner.id });
    await grantRow({ userId: user.id, clientId: app.id });
    expect(await describeVerification(verify)).toEqual({ state: "confirmed", email: user.email });
    expect(await confirmEmail(verify)).toEqual({ state: "confirmed", email: user.email });
    expect(await (await db()).accessToken.count({ where: { userId: user.id, revokedAt: null } })).toBe(1);
  });
});

describe("links are of one purpose", () => {
  it("a reset link does not confirm an address, and stays usable for the reset", async () => {
    const user = await makeUser();
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: null } }));
    const reset = await link(user, "reset_password");
    expect(await confirmEmail(reset)).toEqual({ state: "unknown" });
    expect(await emailConfirmed(user.id)).toBe(false);
    expect(await resetPassword({ token: reset, password: "a new password here" })).toEqual({ state: "reset", email: user.email });
  });

  it("a used link of an account that has another address since says used, not confirmed", async () => {
    const user = await makeUser();
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: null } }));
    const verify = await link(user, "verify_email");
    expect(await confirmEmail(verify)).toEqual({ state: "confirmed", email: user.email });
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { email: uniqueEmail("moved") } }));
    expect(await describeVerification(verify)).toEqual({ state: "used" });
  });

  it("no such account is not confirmed", async () => {
    expect(await emailConfirmed(2_000_000_000)).toBe(false);
  });
});

/** The newest account mail to `email`, and the newest account token of the account. */
async function mailAndToken(email: string) {
  const d = await db();
  const mail = await d.mailMessage.findFirstOrThrow({ where: { to: email }, orderBy: { id: "desc" } });
  const token = await d.accountToken.findFirstOrThrow({ where: { email }, orderBy: { id: "desc" } });
  return { mail, token };
}
/** The mail names the token's expiry (rendered a moment before the token was written: either minute). */
const namesExpiry = (text: string, expiresAt: Date) => [expiresAt, new Date(expiresAt.getTime() - 60_000)].some((at) => text.includes(formatDateTime(at)));

describe("the account mails", () => {
  it("a confirmation mail sent again names when its link expires, is tied to its token, and keeps a copy without the link that still greets its reader", async () => {
    const user = await makeUser({ name: "Rhea Resend" });
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: null } }));
    expect(await resendVerification(user.id)).toEqual({ state: "sent" });
    const { mail, token } = await mailAndToken(user.email);
    expect(token.expiresAt.getTime() - token.createdAt.getTime()).toBe(VERIFY_EMAIL_TTL_MS);
    expect(mail.accountTokenId).toBe(token.id);
    expect(namesExpiry(mail.text, token.expiresAt)).toBe(true);
    expect(mail.redactedText).toContain("Rhea Resend");
    expect(mail.redactedText).not.toContain("/verify-email?token=");
  });

  it("a reset mail names when its link expires and keeps a copy without the link that still greets its reader", async () => {
    const user = await makeUser({ name: "Rory Reset" });
    await requestPasswordReset({ email: user.email, ip: ipFor() });
    const { mail, token } = await mailAndToken(user.email);
    expect(token.expiresAt.getTime() - token.createdAt.getTime()).toBe(RESET_PASSWORD_TTL_MS);
    expect(namesExpiry(mail.text, token.expiresAt)).toBe(true);
    expect(mail.redactedText).toContain("Rory Reset");
    expect(mail.redactedText).not.toContain("/reset-password?token=");
  });

  it("a sign-up's confirmation mail names when its link expires, and greets by the address's local part without a name", async () => {
    const email = uniqueEmail("local-part");
    await signUp({ email, password: "a sign-up password", ip: ipFor() });
    const { mail, token } = await mailAndToken(email);
    expect(namesExpiry(mail.text, token.expiresAt)).toBe(true);
    expect((await (await db()).user.findUniqueOrThrow({ where: { email } })).name).toBe(email.split("@")[0]);
  });

  it("a sign-up with a confirmed account's address mails its owner a note that links to the reset page", async () => {
    const user = await makeUser();
    await signUp({ email: user.email, password: "a sign-up password", ip: ipFor() });
    const mail = await (await db()).mailMessage.findFirstOrThrow({ where: { to: user.email, kind: "signup_attempt" } });
    expect(mail.text).toContain("/forgot-password");
  });

  it("the daily cap counts the account mails to this address only, and a new account over it gets no mail", async () => {
    // Other addresses' account mails, more than the cap, do not stop this one.
    const others = Array.from({ length: ACCOUNT_MAIL_LIMIT.max + 1 }, () => uniqueEmail("other"));
    const row = (to: string) => ({ to, kind: "verify_email", subject: "s", text: "t", html: "h", createdAt: new Date(nowMs()) });
    await write((tx) => tx.mailMessage.createMany({ data: others.map(row) }));
    const user = await makeUser();
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: null } }));
    expect(await resendVerification(user.id)).toEqual({ state: "sent" });
    // Mail of other kinds to the address does not count either.
    const busy = await makeUser();
    await write((tx) => tx.user.update({ where: { id: busy.id }, data: { emailVerifiedAt: null } }));
    await write((tx) => tx.mailMessage.createMany({ data: Array.from({ length: ACCOUNT_MAIL_LIMIT.max }, () => ({ ...row(busy.email), kind: "permission_request" })) }));
    expect(await resendVerification(busy.id)).toEqual({ state: "sent" });
    // An address that already got the cap's mails: the account is made, no mail goes.
    const full = uniqueEmail("full");
    await write((tx) => tx.mailMessage.createMany({ data: Array.from({ length: ACCOUNT_MAIL_LIMIT.max }, () => row(full)) }));
    await signUp({ email: full, password: "a sign-up password", ip: ipFor() });
    expect(await (await db()).user.count({ where: { email: full } })).toBe(1);
    expect(await (await db()).mailMessage.count({ where: { to: full } })).toBe(ACCOUNT_MAIL_LIMIT.max);
  });
});

describe("the sign-up limit per client address", () => {
  it(`refuses the ${SIGNUP_LIMIT_PER_ADDRESS.max + 1}th sign-up of the hour with 429, recorded with the limit's name`, async () => {
    const ip = ipFor();
    for (let i = 0; i < SIGNUP_LIMIT_PER_ADDRESS.max; i++) await signUp({ email: uniqueEmail("burst"), password: "a sign-up password", ip });
    await expect(signUp({ email: uniqueEmail("burst"), password: "a sign-up password", ip })).rejects.toMatchObject({ status: 429 });
    const events = await (await db()).auditEvent.findMany({ where: { type: "rate_limited", ip } });
    expect(events.map((event) => JSON.parse(event.detail!))).toEqual([{ limit: "signup" }]);
  });
});
