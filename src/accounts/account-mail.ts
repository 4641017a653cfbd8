// The account mails (docs/rules/accounts.md#sign-up-and-confirmation, docs/rules/accounts.md#password-reset):
// the confirmation link after sign-up (emails/verify-email.tsx), the note to an existing account's owner when
// someone signs up with its address (emails/signup-attempt.tsx), and the password reset link
// (emails/reset-password.tsx). Rendered before the transaction that writes them; names through noLinks(); the
// mails with a link also as a copy without it, for the outbox to keep once the provider accepted them.
//
// An address gets at most ACCOUNT_MAIL_LIMIT of these a day, whoever triggers them (sign-ups from many
// addresses, "send the link again", reset requests), so that nobody can use the service to flood a mailbox;
// concurrent requests included (the count holds the mailbox's lock on PostgreSQL).
import { createElement } from "react";
import { nowMs } from "@/clock";
import { env } from "@/env";
import { noLinks } from "@/email/no-links";
import type { OutgoingMail } from "@/email/outbox";
import { renderHtmlAndText } from "@/email/render";
import { formatDateTime } from "@/format/date-time";
import type { Tx } from "@/db/client";
import { lockKeysInTx } from "@/limits/limiter";

export const ACCOUNT_MAIL_LIMIT = { max: 5, windowMs: 24 * 3600 * 1000 };
export const VERIFY_EMAIL_TTL_MS = 24 * 3600 * 1000;
export const RESET_PASSWORD_TTL_MS = 3600 * 1000;
const ACCOUNT_MAIL_KINDS = ["verify_email", "signup_attempt", "reset_password"];

function pageLink(path: string, token?: string): string {
  const url = new URL(path, env().appUrl);
  if (token !== undefined) url.searchParams.set("token", token);
  return url.href;
}

export const verifyEmailLink = (token: string) => pageLink("/verify-email", token);
export const resetPasswordLink = (token: string) => pageLink("/reset-password", token);

// The mail components (emails/, and react-email with them) load when a mail is first rendered, not with the
// server (docs/design.md#memory).
export async function renderVerifyEmail(user: { name: string; email: string }, token: string, expiresAt: Date): Promise<OutgoingMail> {
  const { default: VerifyEmail, VERIFY_EMAIL_SUBJECT } = await import("@emails/verify-email");
  const props = { name: noLinks(user.name), email: user.email, link: verifyEmailLink(token), expiresAt: formatDateTime(expiresAt) };
  const [live, kept] = await Promise.all([
    renderHtmlAndText(createElement(VerifyEmail, props)),
    renderHtmlAndText(createElement(VerifyEmail, { ...props, link: null })),
  ]);
  return { to: user.email, kind: "verify_email", subject: VERIFY_EMAIL_SUBJECT, ...live, redactedHtml: kept.html, redactedText: kept.text };
}

export async function renderSignupAttempt(user: { name: string; email: string }): Promise<OutgoingMail> {
  const { default: SignupAttempt, SIGNUP_ATTEMPT_SUBJECT } = await import("@emails/signup-attempt");
  const props = { name: noLinks(user.name), email: user.email, signInUrl: pageLink("/login"), resetUrl: pageLink("/forgot-password") };
  const rendered = await renderHtmlAndText(createElement(SignupAttempt, props));
  return { to: user.email, kind: "signup_attempt", subject: SIGNUP_ATTEMPT_SUBJECT, ...rendered };
}

export async function renderResetPassword(user: { name: string; email: string }, token: string, expiresAt: Date): Promise<OutgoingMail> {
  const { default: ResetPassword, RESET_PASSWORD_SUBJECT } = await import("@emails/reset-password");
  const props = { name: noLinks(user.name), email: user.email, link: resetPasswordLink(token), expiresAt: formatDateTime(expiresAt) };
  const [live, kept] = await Promise.all([
    renderHtmlAndText(createElement(ResetPassword, props)),
    renderHtmlAndText(createElement(ResetPassword, { ...props, link: null })),
  ]);
  return { to: user.email, kind: "reset_password", subject: RESET_PASSWORD_SUBJECT, ...live, redactedHtml: kept.html, redactedText: kept.text };
}

/**
 * Whether `email` may get one more account mail now (inside the transaction that would write it). On
 * PostgreSQL the mailbox's lock is taken first and held to the end of that transaction, so that two
 * transactions never both count four and write a sixth (SQLite runs one writing transaction at a time).
 */
export async function accountMailAllowed(tx: Tx, email: string): Promise<boolean> {
  await lockKeysInTx(tx, [`account_mail:${email}`]);
  const sent = await tx.mailMessage.count({
    where: { to: email, kind: { in: ACCOUNT_MAIL_KINDS }, createdAt: { gt: new Date(nowMs() - ACCOUNT_MAIL_LIMIT.windowMs) } },
  });
  return sent < ACCOUNT_MAIL_LIMIT.max;
}
