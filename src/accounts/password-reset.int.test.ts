// Password reset by e-mail (docs/rules/accounts.md#password-reset) against a real database: the same answer
// for every address, a single-use link valid one hour that only a POST uses, the limits per client address and
// per typed address, every session signed out, the address confirmed, older links used up, and nothing but the
// mail's own copy ever holding the token.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { ACCOUNT_MAIL_LIMIT, RESET_PASSWORD_TTL_MS } from "@/accounts/account-mail";
import { requestPasswordReset, RESET_LIMIT_PER_ADDRESS, RESET_LIMIT_PER_EMAIL } from "@/accounts/request-password-reset";
import { describePasswordReset, resetPassword } from "@/accounts/reset-password";
import { signUp } from "@/accounts/sign-up";
import { sessionUserFromCookieHeader } from "@/auth/session";
import { LINK_REMOVED_NOTE } from "@emails/link-removed";
import { deliverDue } from "@/email/deliver";
import { listMail } from "@/email/list-mail";
import { digest } from "@/secrets";
import { db } from "@/db/client";
import { makeUser, uniqueEmail } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";
import { signInWithPassword } from "@/users/sign-in";

afterEach(() => resetClock());

/** A fresh client address per call, so that the per-address limit only bites where a test wants it. */
const ipFor = (() => {
  const base = Math.floor(Math.random() * 200);
  let next = 0;
  return () => `10.${base}.${Math.floor(++next / 250) + 100}.${next % 250}`;
})();

const NEW_PASSWORD = "a brand new password";
const user = async (email: string) => (await db()).user.findUniqueOrThrow({ where: { email } });

/** The reset token in the newest mail to `email`, as its reader would see it. */
async function tokenFromMail(email: string): Promise<string> {
  const [mail] = await listMail({ to: email });
  expect(mail?.subject).toBe("Reset your password");
  const token = /\/reset-password\?token=([A-Za-z0-9_-]{43})/.exec(mail?.text ?? "")?.[1];
  expect(token, mail?.text).toBeDefined();
  return token!;
}

async function requested(email: string): Promise<string> {
  expect(await requestPasswordReset({ email, ip: ipFor() })).toEqual({ email });
  return tokenFromMail(email);
}

describe("asking for a reset link", () => {
  it("answers an address with an account, one without and an unconfirmed one alike; only accounts get a link", async () => {
    const known = await makeUser({ name: "Kim Known" });
    const unknown = uniqueEmail("nobody");
    const unconfirmed = uniqueEmail("unconfirmed");
    await signUp({ email: unconfirmed, name: "Una", password: "first password", ip: ipFor() });

    const answers = await Promise.all([known.email.toUpperCase(), unknown, unconfirmed].map((email) => requestPasswordReset({ email, ip: ipFor() })));
    expect(answers).toEqual([{ email: known.email }, { email: unknown }, { email: unconfirmed }]);

    expect(await listMail({ to: unknown })).toEqual([]);
    const [mail] = await listMail({ to: known.email });
    expect(mail).toMatchObject({ subject: "Reset your password", status: "pending" });
    expect(mail!.text).toContain("Hello Kim Known,");
    expect(mail!.text).toContain("Bundle permissions");
    // The plain-text version gives the link once.
    expect(mail!.text.match(/\/reset-password\?token=/g)).toHaveLength(1);
    // The owner of an address that someone else registered gets the link too: it is how they take it over.
    expect((await listMail({ to: unconfirmed })).map((m) => m.subject)).toEqual(["Reset your password", "Confirm your e-mail address"]);
  });

  it("stores the token only as its digest, valid one hour, and keeps no live link in the mail once it was sent", async () => {
    const person = await makeUser();
    const token = await requested(person.email);
    const rows = await (await db()).accountToken.findMany({ where: { userId: person.id } });
    expect(rows).toEqual([expect.objectContaining({ digest: digest(token), purpose: "reset_password", email: person.email, usedAt: null })]);
    expect(rows[0]!.expiresAt.getTime() - rows[0]!.createdAt.getTime()).toBe(RESET_PASSWORD_TTL_MS);
    expect(JSON.stringify(rows)).not.toContain(token);

    const row = await (await db()).mailMessage.findFirstOrThrow({ where: { to: person.email } });
    expect(row).toMatchObject({ kind: "reset_password", accountTokenId: rows[0]!.id });
    await deliverDue({ ids: [row.id], transport: async () => ({ providerId: "p" }) });
    const kept = await (await db()).mailMessage.findUniqueOrThrow({ where: { id: row.id } });
    for (const part of [kept.text, kept.html]) {
      expect(part).not.toContain(token);
      expect(part).toContain(LINK_REMOVED_NOTE);
    }
  });

  it(`limits requests per client address (${RESET_LIMIT_PER_ADDRESS.max} an hour), for unknown and known addresses alike`, async () => {
    const ip = ipFor();
    const known = await makeUser();
    for (let i = 0; i < RESET_LIMIT_PER_ADDRESS.max; i++) await requestPasswordReset({ email: uniqueEmail("spray"), ip });
    for (const email of [known.email, uniqueEmail("late")]) {
      const refused = await requestPasswordReset({ email, ip }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 429, error: "rate_limited" });
      expect(Number((refused as { headers: Record<string, string> }).headers["Retry-After"])).toBeGreaterThan(3500);
    }
    expect(await listMail({ to: known.email })).toEqual([]);
    // Another client address is not held up, and the window passes.
    expect(await requestPasswordReset({ email: known.email, ip: ipFor() })).toEqual({ email: known.email });
    advanceClock(3600 * 1000);
    expect(await requestPasswordReset({ email: uniqueEmail(), ip })).toMatchObject({ email: expect.any(String) });
  });

  it(`limits requests per typed address (${RESET_LIMIT_PER_EMAIL.max} an hour from any client address), the same whether or not it has an account`, async () => {
    const known = await makeUser();
    const unknown = uniqueEmail("ghost");
    for (const email of [known.email, unknown]) {
      for (let i = 0; i < RESET_LIMIT_PER_EMAIL.max; i++) expect(await requestPasswordReset({ email, ip: ipFor() })).toEqual({ email });
      await expect(requestPasswordReset({ email, ip: ipFor() })).rejects.toMatchObject({ status: 429, error: "rate_limited" });
    }
    expect(await listMail({ to: known.email })).toHaveLength(RESET_LIMIT_PER_EMAIL.max);
    const events = await (await db()).auditEvent.findMany({ where: { type: "rate_limited", userId: known.id } });
    expect(events.map((event) => JSON.parse(event.detail!))).toEqual([{ limit: "password reset" }]);
  });

  it(`counts reset mails toward the mailbox's ${ACCOUNT_MAIL_LIMIT.max} account mails a day: over it, the same answer and no mail`, async () => {
    const person = await makeUser();
    await (await db()).$transaction(async (tx) => {
      for (let i = 0; i < ACCOUNT_MAIL_LIMIT.max; i++) {
        await tx.mailMessage.create({ data: { to: person.email, kind: "signup_attempt", subject: "s", text: "t", html: "h", status: "sent" } });
      }
    });
    expect(await requestPasswordReset({ email: person.email, ip: ipFor() })).toEqual({ email: person.email });
    expect((await listMail({ to: person.email })).filter((mail) => mail.subject === "Reset your password")).toEqual([]);
    expect(await (await db()).accountToken.count({ where: { userId: person.id } })).toBe(0);
  });

  it("refuses a malformed address with the field's message", async () => {
    await expect(requestPasswordReset({ email: "not an address", ip: ipFor() })).rejects.toMatchObject({ status: 400, error: "email: must be an e-mail address" });
  });
});

describe("choosing the new password", () => {
  it("changes nothing when the link is only opened; the POST sets the password, once", async () => {
    const person = await makeUser({ name: "Pat" });
    const token = await requested(person.email);
    for (let i = 0; i < 2; i++) expect(await describePasswordReset(token)).toMatchObject({ state: "ready", email: person.email, name: "Pat" });
    expect(await signInWithPassword({ email: person.email, password: person.password, ip: ipFor() })).toMatchObject({ ok: true });

    expect(await resetPassword({ token, password: NEW_PASSWORD })).toEqual({ state: "reset", email: person.email });
    expect(await signInWithPassword({ email: person.email, password: person.password, ip: ipFor() })).toEqual({ ok: false, reason: "invalid" });
    expect(await signInWithPassword({ email: person.email, password: NEW_PASSWORD, ip: ipFor() })).toMatchObject({ ok: true });

    // Single use: the same link again changes nothing.
    expect(await describePasswordReset(token)).toEqual({ state: "used" });
    expect(await resetPassword({ token, password: "another new password" })).toEqual({ state: "used" });
    expect(await signInWithPassword({ email: person.email, password: NEW_PASSWORD, ip: ipFor() })).toMatchObject({ ok: true });
  });

  it("gives exactly one of ten concurrent uses of a link the reset", async () => {
    const person = await makeUser();
    const token = await requested(person.email);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => resetPassword({ token, password: `${NEW_PASSWORD} ${i}` })));
    expect(results.filter((r) => r.state === "reset")).toHaveLength(1);
    expect(results.filter((r) => r.state === "used")).toHaveLength(9);
    expect((await user(person.email)).sessionVersion).toBe(1);
  });

  it("refuses a link older than one hour, and leaves the password as it was", async () => {
    const person = await makeUser();
    const token = await requested(person.email);
    advanceClock(RESET_PASSWORD_TTL_MS - 1000);
    expect(await describePasswordReset(token)).toMatchObject({ state: "ready" });
    advanceClock(1000);
    expect(await describePasswordReset(token)).toEqual({ state: "expired" });
    expect(await resetPassword({ token, password: NEW_PASSWORD })).toEqual({ state: "expired" });
    expect(await signInWithPassword({ email: person.email, password: person.password, ip: ipFor() })).toMatchObject({ ok: true });
  });

  it("signs out every session of the account", async () => {
    const person = await makeUser();
    const [laptop, phone] = await Promise.all([sessionCookie(person, 0), sessionCookie(person, 0)]);
    expect(await sessionUserFromCookieHeader(laptop)).toMatchObject({ id: person.id });
    await resetPassword({ token: await requested(person.email), password: NEW_PASSWORD });
    expect(await sessionUserFromCookieHeader(laptop)).toBeNull();
    expect(await sessionUserFromCookieHeader(phone)).toBeNull();
    // A session made after the reset (it carries the new version) works.
    expect(await sessionUserFromCookieHeader(await sessionCookie(person, 1))).toMatchObject({ id: person.id });
  });

  it("confirms an address that was not confirmed: whoever reads the mailbox owns the address", async () => {
    const email = uniqueEmail("takeover");
    await signUp({ email, name: "Squatter", password: "squatter password", ip: ipFor() });
    expect((await user(email)).emailVerifiedAt).toBeNull();
    expect(await resetPassword({ token: await requested(email), password: NEW_PASSWORD })).toEqual({ state: "reset", email });
    expect((await user(email)).emailVerifiedAt).toBeInstanceOf(Date);
    expect(await signInWithPassword({ email, password: "squatter password", ip: ipFor() })).toEqual({ ok: false, reason: "invalid" });
  });

  it("uses up the account's older reset links", async () => {
    const person = await makeUser();
    const older = await requested(person.email);
    const newer = await requested(person.email);
    expect(await resetPassword({ token: newer, password: NEW_PASSWORD })).toMatchObject({ state: "reset" });
    expect(await resetPassword({ token: older, password: "the attacker's choice" })).toEqual({ state: "used" });
    expect(await signInWithPassword({ email: person.email, password: NEW_PASSWORD, ip: ipFor() })).toMatchObject({ ok: true });
  });

  it("refuses a password that breaks the rules without using up the link", async () => {
    const person = await makeUser();
    const token = await requested(person.email);
    await expect(resetPassword({ token, password: "short" })).rejects.toMatchObject({ status: 400, error: "password: must be at least 8 characters" });
    expect(await describePasswordReset(token)).toMatchObject({ state: "ready" });
    expect(await resetPassword({ token, password: NEW_PASSWORD })).toMatchObject({ state: "reset" });
  });

  it("lets the owner sign in at once: the failed sign-ins counted against the address are forgotten", async () => {
    const person = await makeUser();
    const ip = ipFor();
    for (let i = 0; i < 10; i++) await signInWithPassword({ email: person.email, password: "wrong guess", ip });
    expect(await signInWithPassword({ email: person.email, password: person.password, ip })).toMatchObject({ ok: false, reason: "rate_limited" });
    await resetPassword({ token: await requested(person.email), password: NEW_PASSWORD });
    expect(await signInWithPassword({ email: person.email, password: NEW_PASSWORD, ip })).toMatchObject({ ok: true });
  });

  it("forgets only the address's own failed sign-ins: a longer address, or one its wildcard characters would match, stays limited", async () => {
    const person = await makeUser({ email: uniqueEmail("re_set") });
    const ip = ipFor();
    const similar = [`${person.email}.org`, person.email.replace("re_set", "reXset"), person.email.replace("re_set", "re%set")];
    for (const email of [person.email, ...similar]) {
      for (let i = 0; i < 10; i++) await signInWithPassword({ email, password: "wrong guess", ip });
    }
    for (const email of similar) expect(await signInWithPassword({ email, password: "wrong guess", ip })).toMatchObject({ ok: false, reason: "rate_limited" });
    await resetPassword({ token: await requested(person.email), password: NEW_PASSWORD });
    expect(await signInWithPassword({ email: person.email, password: NEW_PASSWORD, ip })).toMatchObject({ ok: true });
    for (const email of similar) expect({ email, result: await signInWithPassword({ email, password: "wrong guess", ip }) }).toMatchObject({ email, result: { ok: false, reason: "rate_limited" } });
  });

  it("answers an unknown, malformed or verify-email token as unknown", async () => {
    const email = uniqueEmail("verify");
    await signUp({ email, password: "a long password", ip: ipFor() });
    const verifyToken = /token=([A-Za-z0-9_-]{43})/.exec((await listMail({ to: email }))[0]!.text)![1]!;
    for (const token of ["x".repeat(43), "", "y".repeat(500), verifyToken]) {
      expect(await describePasswordReset(token)).toEqual({ state: "unknown" });
      expect(await resetPassword({ token, password: NEW_PASSWORD })).toEqual({ state: "unknown" });
    }
    expect(await signInWithPassword({ email, password: "a long password", ip: ipFor() })).toMatchObject({ ok: true });
  });
});
