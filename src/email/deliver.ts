// Delivery of the outbox (docs/rules/permission-requests.md#mail-and-the-outbox; statuses in
// src/email/outbox.ts). Each message is claimed with one conditional update (pending and due, or a stale
// `sending` claim) before it is sent, so that two server instances, the sweep and `mail:deliver` never send it
// twice; Resend also gets a per-message idempotency key, which covers the one remaining gap (a worker that
// dies after Resend accepted the mail and before it could mark it sent is reclaimed later, and Resend answers
// the retry with the first result).
//
// A failed attempt is retried with exponential backoff (docs/rules/operations.md#mail-delivery): the first
// retry is due 30 seconds after the failure (the sweep, every SWEEP_INTERVAL_MS, then sends it within a minute
// of the failure), then 1, 2, 4, ... minutes, at most 30 minutes apart; after MAX_ATTEMPTS (about three hours
// of trying) the message stays `failed`, visible in `mail:list`. A send that does not answer within
// SEND_TIMEOUT_MS counts as failed; a claim that a process never finished (it died) is taken again after
// STALE_CLAIM_MS. RESEND_BASE_URL (the Resend SDK's own variable) points the transport at another API, e.g. a
// local stand-in. Without RESEND_API_KEY there is no transport: nothing is claimed and every message stays
// `pending`, readable in the outbox.
//
// A message that carries a single-use link (a redeem or confirmation token) also holds a copy without it;
// when the provider accepts the message, that copy replaces the text and HTML in the same update that marks
// it sent, so that no live token stays at rest (docs/rules/permission-requests.md#mail-and-the-outbox). Mail
// that was never sent keeps its link.
import { Resend } from "resend";
import { now, nowMs } from "@/clock";
import { env } from "@/env";
import { db, write } from "@/db/client";
import { log, redact } from "@/observability/log";
import { countMailFailure } from "@/observability/metrics";

export type MailToSend = { id: number; to: string; subject: string; text: string; html: string; createdAt: Date };

/**
 * Sends one message, resolving with the provider's id, or throws. The only stand-in the tests use is one of
 * these, in place of the provider's network call.
 */
export type MailTransport = (message: MailToSend) => Promise<{ providerId: string | null }>;

export const MAX_ATTEMPTS = 12;
export const BASE_BACKOFF_MS = 30_000;
export const MAX_BACKOFF_MS = 30 * 60_000;
/** An attempt whose send has not answered by then has failed (the provider, or the network, hangs). */
export const SEND_TIMEOUT_MS = 30_000;
/**
 * A `sending` claim older than this belongs to a process that died (a live one finishes or fails its attempt
 * within SEND_TIMEOUT_MS and a few database writes); the message is claimed again.
 */
export const STALE_CLAIM_MS = 2 * 60_000;
const BATCH = 25;
const MAX_PER_RUN = 500;

/** The wait after the `attempts`-th failed attempt: 30 seconds, doubling, at most 30 minutes. */
export function backoffMs(attempts: number): number {
  return Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.max(0, attempts - 1));
}

/** Resend's idempotency key: stable across retries of one message, never reused by a recreated database. */
export const idempotencyKey = (message: Pick<MailToSend, "id" | "createdAt">) => `mail-${message.id}-${message.createdAt.getTime()}`;

/**
 * The Resend transport. Resend answers most failures with an error object instead of throwing: both fail.
 * `baseUrl` is for tests, which point it at a local stand-in for Resend's API (never the network).
 */
export function resendTransport(apiKey: string, from: string, baseUrl?: string): MailTransport {
  const resend = new Resend(apiKey, baseUrl ? { baseUrl } : undefined);
  return async (message) => {
    const { data, error } = await resend.emails.send(
      { from, to: message.to, subject: message.subject, html: message.html, text: message.text },
      { idempotencyKey: idempotencyKey(message) },
    );
    if (error) throw new Error(`resend ${error.name}${error.statusCode ? ` (${error.statusCode})` : ""}: ${error.message}`);
    return { providerId: data?.id ?? null };
  };
}

let configured: { key: string; transport: MailTransport } | null = null;

/** Resend when RESEND_API_KEY is set (the client is built once, and only then); otherwise null. */
export function defaultTransport(): MailTransport | null {
  const { resendApiKey, mailFrom } = env();
  if (!resendApiKey) return null;
  const { resendBaseUrl } = env();
  const key = `${resendApiKey}\n${resendBaseUrl ?? ""}`;
  if (configured?.key !== key) configured = { key, transport: resendTransport(resendApiKey, mailFrom, resendBaseUrl ?? undefined) };
  return configured.transport;
}

export type DeliveryResult = {
  /** Accepted by the provider in this run. */
  sent: number;
  /** Attempts that failed in this run (retried later, or given up: see gaveUp). */
  failed: number;
  /** Of those, messages that used their last attempt and are now `failed`. */
  gaveUp: number;
  /** Whether there was a transport at all (false: RESEND_API_KEY is not set and nothing was tried). */
  delivering: boolean;
};

type DeliverOptions = {
  /** Defaults to defaultTransport(). null: no provider, nothing is claimed. */
  transport?: MailTransport | null;
  /** Only these messages (right after the request that wrote them; tests). */
  ids?: number[];
};

/** What may be claimed at `at`: due pending messages and stale claims with attempts left. */
function claimable(at: Date) {
  return {
    OR: [
      { status: "pending", nextAttemptAt: { lte: at } },
      { status: "sending", claimedAt: { lt: new Date(at.getTime() - STALE_CLAIM_MS) }, attempts: { lt: MAX_ATTEMPTS } },
    ],
  };
}

const errorText = (error: unknown) => redact(error instanceof Error ? error.message : String(error)).slice(0, 500) || "unknown error";

/** The send, or a failure once `ms` have passed without an answer (the late answer is ignored). */
function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from the mail provider within ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Claims one message: the conditional update is the whole transaction. Returns the claim time, or null. */
async function claim(id: number): Promise<Date | null> {
  const at = now();
  const claimed = await write((tx) =>
    tx.mailMessage.updateMany({
      where: { id, ...claimable(at) },
      data: { status: "sending", claimedAt: at, attempts: { increment: 1 } },
    }),
  );
  return claimed.count === 1 ? at : null;
}

async function attempt(id: number, transport: MailTransport, result: DeliveryResult): Promise<void> {
  const claimedAt = await claim(id);
  if (!claimedAt) return; // someone else has it, or it is no longer due
  const message = await (await db()).mailMessage.findUniqueOrThrow({ where: { id } });
  const ours = { id, status: "sending", claimedAt };
  try {
    const { providerId } = await withTimeout(transport(message), SEND_TIMEOUT_MS);
    // Once the provider has the mail, the stored copy loses its single-use link
    // (docs/rules/permission-requests.md#mail-and-the-outbox).
    const redacted = {
      ...(message.redactedText !== null ? { text: message.redactedText, redactedText: null } : {}),
      ...(message.redactedHtml !== null ? { html: message.redactedHtml, redactedHtml: null } : {}),
    };
    await write((tx) => tx.mailMessage.updateMany({ where: ours, data: { status: "sent", sentAt: now(), providerId, lastError: null, ...redacted } }));
    result.sent++;
    log.info("mail sent", { mailId: id, attempts: message.attempts });
  } catch (error) {
    const lastError = errorText(error);
    const last = message.attempts >= MAX_ATTEMPTS;
    await write((tx) =>
      tx.mailMessage.updateMany({
        where: ours,
        data: last
          ? { status: "failed", lastError }
          : { status: "pending", lastError, nextAttemptAt: new Date(nowMs() + backoffMs(message.attempts)) },
      }),
    );
    result.failed++;
    countMailFailure();
    if (last) result.gaveUp++;
    log.warn(last ? "mail delivery failed for good" : "mail delivery failed, will retry", { mailId: id, attempts: message.attempts, error: lastError });
  }
}

/**
 * Delivers what is due (or only `ids`), one message at a time, and says how many were sent and failed.
 * Safe to run any number of times at once, in any number of processes.
 */
export async function deliverDue(options: DeliverOptions = {}): Promise<DeliveryResult> {
  const transport = options.transport === undefined ? defaultTransport() : options.transport;
  const result: DeliveryResult = { sent: 0, failed: 0, gaveUp: 0, delivering: transport !== null };
  if (!transport) return result;
  const client = await db();
  // A claim that went stale on its last attempt has nothing left to retry.
  await write((tx) =>
    tx.mailMessage.updateMany({
      where: { status: "sending", claimedAt: { lt: new Date(nowMs() - STALE_CLAIM_MS) }, attempts: { gte: MAX_ATTEMPTS }, ...(options.ids ? { id: { in: options.ids } } : {}) },
      data: { status: "failed", lastError: "interrupted during the last attempt" },
    }),
  );
  const tried = new Set<number>();
  while (tried.size < MAX_PER_RUN) {
    const due = await client.mailMessage.findMany({
      where: { ...claimable(now()), id: { in: options.ids, notIn: [...tried] } },
      orderBy: [{ nextAttemptAt: "asc" }, { id: "asc" }],
      take: BATCH,
      select: { id: true },
    });
    if (due.length === 0) break;
    for (const { id } of due) {
      tried.add(id);
      await attempt(id, transport, result);
    }
  }
  return result;
}

/** How many messages wait in the outbox. */
export async function pendingMailCount(): Promise<number> {
  return (await db()).mailMessage.count({ where: { status: "pending" } });
}
