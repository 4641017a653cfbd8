// Sign-up, e-mail confirmation and account mail (docs/rules/accounts.md#sign-up-and-confirmation), against a
// real database: the same answer for new and existing addresses, the confirmation link (single-use, 24 hours,
// confirmed only by the POST), no mail to an unconfirmed address but the confirmation, the limits per client
// address and per mailbox, and no live token left in the stored mail once it was sent.
import { afterEach, describe, expect, it } from "vitest";
import { env } from "@/env";
import { advanceClock, resetClock } from "@/clock";
import { ACCOUNT_MAIL_LIMIT, accountMailAllowed, renderSignupAttempt } from "@/accounts/account-mail";
import { enqueueMail } from "@/email/outbox";
import { signUp } from "@/accounts/sign-up";
import { confirmEmail, describeVerification, resendVerification } from "@/accounts/verify-email";
import { LINK_REMOVED_NOTE } from "@emails/link-removed";
import { deliverDue } from "@/email/deliver";
import { listMail } from "@/email/list-mail";
import { pruneTokens } from "@/maintenance/prune-tokens";
import { digest } from "@/secrets";
import { db, write } from "@/db/client";
import { runCli } from "@/testing/cli";
import { makeUser, uniqueEmail } from "@/testing/factories";
import { signInWithPassword } from "@/users/sign-in";

afterEach(() => resetClock());

const DAY = 24 * 3600 * 1000;
/** A fresh client address per call, so that the per-address sign-up limit only bites where a test wants it. */
const ipFor = (() => {
  const base = Math.floor(Math.random() * 200);
  let next = 0;
  return () => `10.${base}.${Math.floor(++next / 250)}.${next % 250}`;
})();

const userByEmail = async (email: string) => (await db()).user.findUnique({ where: { email } });

/** The confirmation token in the newest mail to `email`, as its reader would see it. */
async function tokenFromMail(email: string): Promise<string> {
  const [mail] = await listMail({ to: email });
  const token = /\/verify-email\?token=([A-Za-z0-9_-]{43})/.exec(mail?.text ?? "")?.[1];
  expect(token, mail?.text).toBeDefined();
  return token!;
}

describe("sign-up", () => {
  it("answers a new address and one that has an account alike; the new one gets a confirmation link, the owner a note", async () => {
    const owner = await makeUser({ name: "Olive Owner" });
    const fresh = uniqueEmail("fresh");
    const forNew = await signUp({ email: fresh, name: "Nina New", password: "a long password", ip: ipFor() });
    const forExisting = await signUp({ email: owner.email.toUpperCase(), name: "Mallory", password: "attacker password", ip: ipFor() });
    expect(forNew).toEqual({ email: fresh });
    expect(forExisting).toEqual({ email: owner.email });

    // The new account exists, unconfirmed, and can sign in.
    const created = await userByEmail(fresh);
    expect(created).toMatchObject({ name: "Nina New", emailVerifiedAt: null });
    expect(await signInWithPassword({ email: fresh, password: "a long password", ip: ipFor() })).toMatchObject({ ok: true });
    const [confirmation] = await listMail({ to: fresh });
    expect(confirmation).toMatchObject({ subject: "Confirm your e-mail address", status: "pending" });
    expect(confirmation!.text).toContain("Hello Nina New,");
    expect(confirmation!.text).toMatch(/http:\/\/localhost:3000\/verify-email\?token=[A-Za-z0-9_-]{43}/);

    // The existing account is untouched: same name and password; its owner is told, without any token.
    expect(await userByEmail(owner.email)).toMatchObject({ id: owner.id, name: "Olive Owner" });
    expect(await signInWithPassword({ email: owner.email, password: "attacker password", ip: ipFor() })).toEqual({ ok: false, reason: "invalid" });
    expect(await signInWithPassword({ email: owner.email, password: owner.password, ip: ipFor() })).toMatchObject({ ok: true });
    const notes = await listMail({ to: owner.email });
    expect(notes.map((mail) => mail.subject)).toEqual(["Someone tried to create an account with your e-mail address"]);
    expect(notes[0]!.text).toContain("Hello Olive Owner,");
    expect(notes[0]!.text).toContain("http://localhost:3000/login");
    expect(notes[0]!.text).not.toMatch(/token=/);
  });

  it("refuses malformed input with the field's message, for every address alike", async () => {
    const owner = await makeUser();
    for (const email of [uniqueEmail(), owner.email]) {
      await expect(signUp({ email, password: "short", ip: ipFor() })).rejects.toMatchObject({ status: 400, error: "password: must be at least 8 characters" });
    }
    await expect(signUp({ email: "not an address", password: "a long password", ip: ipFor() })).rejects.toMatchObject({ status: 400, error: "email: must be an e-mail address" });
  });

  it("sends an unconfirmed address nothing but its confirmation: a second sign-up with it mails nothing", async () => {
    const email = uniqueEmail("squatted");
    await signUp({ email, name: "First", password: "first password", ip: ipFor() });
    expect(await signUp({ email, name: "Second", password: "second password", ip: ipFor() })).toEqual({ email });
    expect((await listMail({ to: email })).map((mail) => mail.subject)).toEqual(["Confirm your e-mail address"]);
    expect(await userByEmail(email)).toMatchObject({ name: "First", emailVerifiedAt: null });
  });

  it("gives concurrent sign-ups with one new address one account, one confirmation, and the same answer", async () => {
    const email = uniqueEmail("race");
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => signUp({ email, name: `Racer ${i}`, password: "a long password", ip: ipFor() })));
    expect(answers).toEqual(Array.from({ length: 5 }, () => ({ email })));
    expect(await (await db()).user.count({ where: { email } })).toBe(1);
    expect((await listMail({ to: email })).map((mail) => mail.subject)).toEqual(["Confirm your e-mail address"]);
  });

  it("stores the confirmation token only as its digest", async () => {
    const email = uniqueEmail();
    await signUp({ email, password: "a long password", ip: ipFor() });
    const token = await tokenFromMail(email);
    const user = (await userByEmail(email))!;
    const rows = await (await db()).accountToken.findMany({ where: { userId: user.id } });
    expect(rows).toEqual([expect.objectContaining({ digest: digest(token), purpose: "verify_email", email, usedAt: null })]);
    expect(rows[0]!.expiresAt.getTime() - rows[0]!.createdAt.getTime()).toBe(DAY);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it("limits sign-ups per client address: 10 an hour, new or existing alike, then 429 with Retry-After", async () => {
    const ip = ipFor();
    const owner = await makeUser();
    for (let i = 0; i < 10; i++) await signUp({ email: i % 2 ? owner.email : uniqueEmail(), password: "a long password", ip });
    await expect(signUp({ email: uniqueEmail(), password: "a long password", ip })).rejects.toMatchObject({ status: 429, error: "rate_limited" });
    const limited = await signUp({ email: uniqueEmail(), password: "a long password", ip }).catch((error: { headers: Record<string, string> }) => error);
    expect(Number((limited as { headers: Record<string, string> }).headers["Retry-After"])).toBeGreaterThan(3500);
    // Another address is not limited by this one; and the window passes.
    expect(await signUp({ email: owner.email, password: "a long password", ip: ipFor() })).toEqual({ email: owner.email });
    advanceClock(3600 * 1000);
    const later = uniqueEmail();
    expect(await signUp({ email: later, password: "a long password", ip })).toEqual({ email: later });
  });

  it(`sends one mailbox at most ${ACCOUNT_MAIL_LIMIT.max} account mails a day, however many sign-ups name it`, async () => {
    const owner = await makeUser();
    for (let i = 0; i < 8; i++) expect(await signUp({ email: owner.email, password: "a long password", ip: ipFor() })).toEqual({ email: owner.email });
    expect(await listMail({ to: owner.email })).toHaveLength(ACCOUNT_MAIL_LIMIT.max);
    advanceClock(DAY);
    await signUp({ email: owner.email, password: "a long password", ip: ipFor() });
    expect(await listMail({ to: owner.email })).toHaveLength(ACCOUNT_MAIL_LIMIT.max + 1);
  });

  it("makes users of the admin CLI confirmed", async () => {
    const email = uniqueEmail("cli");
    const run = await runCli("user:create", "--email", email, "--password", "a long password", "--json");
    expect(run.code).toBe(0);
    expect((await userByEmail(email))!.emailVerifiedAt).toBeInstanceOf(Date);
  });
});

describe("confirming the address", () => {
  async function signedUp() {
    const email = uniqueEmail("confirm");
    await signUp({ email, name: "Cora", password: "a long password", ip: ipFor() });
    return { email, token: await tokenFromMail(email) };
  }

  it("shows what the link confirms without confirming it (a GET changes nothing); the POST confirms once", async () => {
    const { email, token } = await signedUp();
    const user = (await userByEmail(email))!;
    for (let i = 0; i < 3; i++) expect(await describeVerification(token)).toEqual({ state: "ready", email, name: "Cora", createdAt: user.createdAt });
    expect((await userByEmail(email))!.emailVerifiedAt).toBeNull();

    expect(await confirmEmail(token)).toEqual({ state: "confirmed", email });
    expect((await userByEmail(email))!.emailVerifiedAt).toBeInstanceOf(Date);
    expect(await confirmEmail(token)).toEqual({ state: "used" });
    // The page, reloaded, says the address is confirmed rather than showing an error.
    expect(await describeVerification(token)).toEqual({ state: "confirmed", email });
  });

  it("a used link whose account no longer has its address, or is not confirmed, is only 'used'", async () => {
    const { email, token } = await signedUp();
    expect(await confirmEmail(token)).toEqual({ state: "confirmed", email });
    const user = (await userByEmail(email))!;
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: null } }));
    expect(await describeVerification(token)).toEqual({ state: "used" });
    await write((tx) => tx.user.update({ where: { id: user.id }, data: { email: uniqueEmail("moved"), emailVerifiedAt: new Date() } }));
    expect(await describeVerification(token)).toEqual({ state: "used" });
    expect(await confirmEmail(token)).toEqual({ state: "used" });
  });

  it("expires the link after 24 hours", async () => {
    const { email, token } = await signedUp();
    advanceClock(DAY);
    expect(await describeVerification(token)).toEqual({ state: "expired" });
    expect(await confirmEmail(token)).toEqual({ state: "expired" });
    expect((await userByEmail(email))!.emailVerifiedAt).toBeNull();
  });

  it("answers an unknown or malformed token as unknown", async () => {
    for (const token of ["x".repeat(43), "", "y".repeat(500)]) {
      expect(await describeVerification(token)).toEqual({ state: "unknown" });
      expect(await confirmEmail(token)).toEqual({ state: "unknown" });
    }
  });

  it("confirms once when ten confirmations race", async () => {
    const { token } = await signedUp();
    const results = await Promise.all(Array.from({ length: 10 }, () => confirmEmail(token)));
    expect(results.filter((r) => r.state === "confirmed")).toHaveLength(1);
    expect(results.filter((r) => r.state === "used")).toHaveLength(9);
  });

  it("sends a signed-in unconfirmed user a new link on request, within the mailbox limit; a confirmed user none", async () => {
    const { email } = await signedUp();
    const user = (await userByEmail(email))!;
    for (let i = 1; i < ACCOUNT_MAIL_LIMIT.max; i++) expect(await resendVerification(user.id)).toEqual({ state: "sent" });
    expect(await resendVerification(user.id)).toEqual({ state: "limited" });
    const mails = await listMail({ to: email });
    expect(mails).toHaveLength(ACCOUNT_MAIL_LIMIT.max);
    // Any of the links confirms; the newest one here.
    expect(await confirmEmail(await tokenFromMail(email))).toEqual({ state: "confirmed", email });
    advanceClock(DAY);
    expect(await resendVerification(user.id)).toEqual({ state: "already_confirmed" });
    expect(await listMail({ to: email })).toHaveLength(ACCOUNT_MAIL_LIMIT.max);
  });

  it("keeps the link in the stored mail until the provider accepted it, then only a note; prunes the mail with its token", async () => {
    const { email, token } = await signedUp();
    const row = await (await db()).mailMessage.findFirstOrThrow({ where: { to: email } });
    expect(row.kind).toBe("verify_email");
    const delivered: string[] = [];
    await deliverDue({ ids: [row.id], transport: async (message) => (delivered.push(message.text), { providerId: "p" }) });
    expect(delivered[0]).toContain(token);
    const kept = await (await db()).mailMessage.findUniqueOrThrow({ where: { id: row.id } });
    expect(kept.status).toBe("sent");
    for (const part of [kept.text, kept.html]) {
      expect(part).not.toContain(token);
      expect(part).toContain(LINK_REMOVED_NOTE);
    }
    // The token still confirms; a day after its use tokens:prune removes it and its mail.
    expect(await confirmEmail(token)).toMatchObject({ state: "confirmed" });
    advanceClock(DAY + 60_000);
    const counts = await pruneTokens();
    expect(counts.account_tokens).toBeGreaterThanOrEqual(1);
    expect(await (await db()).mailMessage.count({ where: { id: row.id } })).toBe(0);
    expect(await (await db()).accountToken.count({ where: { digest: digest(token) } })).toBe(0);
  });
});

// PostgreSQL runs transactions side by side: two that each counted the mailbox's account mails before either
// wrote one would both pass the cap. The count takes a lock on the mailbox first (src/accounts/account-mail.ts).
// SQLite runs one writing transaction at a time, so it cannot happen there.
describe.runIf(env().database.kind === "postgresql")("the mailbox cap under concurrent transactions (PostgreSQL)", () => {
  it(`a transaction that counts while another has counted and not yet written waits for it: never more than ${ACCOUNT_MAIL_LIMIT.max} mails`, async () => {
    const owner = await makeUser();
    const mail = await renderSignupAttempt(owner);
    await write(async (tx) => {
      for (let i = 1; i < ACCOUNT_MAIL_LIMIT.max; i++) await enqueueMail(tx, mail);
    });
    let releaseFirst!: () => void;
    const firstMayWrite = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstCounted!: () => void;
    const counted = new Promise<void>((resolve) => (firstCounted = resolve));
    const first = write(async (tx) => {
      const allowed = await accountMailAllowed(tx, owner.email);
      firstCounted();
      await firstMayWrite;
      return allowed ? enqueueMail(tx, mail) : null;
    });
    await counted;
    let secondAnswered = false;
    const second = write(async (tx) => ((await accountMailAllowed(tx, owner.email)) ? enqueueMail(tx, mail) : null)).finally(() => (secondAnswered = true));
    // The second either waits on the mailbox's lock (held by the first) or, without it, has counted and written.
    const waitingOnLock = async () =>
      Number((await (await db()).$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'`))[0]!.n) > 0;
    for (let i = 0; i < 2000 && !secondAnswered && !(await waitingOnLock()); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    releaseFirst();
    const [firstId, secondId] = await Promise.all([first, second]);
    expect(firstId).not.toBeNull();
    expect(secondId).toBeNull();
    expect(await listMail({ to: owner.email })).toHaveLength(ACCOUNT_MAIL_LIMIT.max);
  });
});
