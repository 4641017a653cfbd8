// The transactional outbox (docs/rules/permission-requests.md#mail-and-the-outbox): a message is written in
// the same transaction as what it announces, so that a request is never created without its mail and no mail
// goes out for a request that was rolled back. src/email/deliver.ts sends it.
//
// Status of a MailMessage (what `mail:list` shows):
//   pending  waiting to be sent: not tried yet, or a retry is scheduled at nextAttemptAt, or no RESEND_API_KEY
//            is set (then nothing is ever claimed and the outbox is the mailbox: CLI, /dev/mailbox, e2e tests)
//   sending  claimed by one worker, which is talking to Resend right now (a claim older than a few minutes is
//            taken to be a crashed worker and claimed again)
//   sent     accepted by Resend; providerId holds Resend's id. A message that carried a single-use link now
//            holds its redacted copy instead (no live token at rest)
//   failed   every attempt failed (MAX_ATTEMPTS); lastError says why; nothing retries it
import { now } from "@/clock";
import type { Tx } from "@/db/client";

export type MailKind = "permission_request" | "permission_request_declined" | "verify_email" | "signup_attempt" | "reset_password";

export type OutgoingMail = {
  to: string;
  subject: string;
  text: string;
  html: string;
  kind?: MailKind;
  /** The copy to keep once the provider accepted the mail: the same mail without its single-use link. */
  redactedText?: string;
  redactedHtml?: string;
};

/** What the message announces: it is pruned with it. */
export type MailLink = { permissionRequestId?: number; accountTokenId?: number };

/** Writes `mail` to the outbox inside the caller's transaction; it is due at once. Returns its id. */
export async function enqueueMail(tx: Tx, mail: OutgoingMail, link: MailLink = {}): Promise<number> {
  const at = now();
  const row = await tx.mailMessage.create({
    data: { ...mail, ...link, status: "pending", createdAt: at, nextAttemptAt: at },
    select: { id: true },
  });
  return row.id;
}
