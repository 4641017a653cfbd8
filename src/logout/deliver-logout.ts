// Delivery of the logout tokens queued when a browser session ends (OpenID Connect Back-Channel Logout 1.0
// 2.5 and 2.8; docs/rules/openid-connect.md#back-channel-logout), on the pattern of the mail outbox
// (src/email/deliver.ts). A LogoutDelivery is pending (due at nextAttemptAt), sending (claimed), sent or
// failed. Each is claimed with one conditional update (pending and due, or a stale claim) before it is sent,
// so that two instances, the sweep and `logout:deliver` never send it twice. The token is signed at each
// attempt (same jti) and POSTed to the client's backchannel_logout_uri as application/x-www-form-urlencoded
// `logout_token`; a 2xx answer is success (2.8: 200 or 204). Anything else, no answer within SEND_TIMEOUT_MS, or
// a redirect (never followed: the registered address is the only one told), or an address that is not public
// (loopback, private, link-local...: refused before any connection unless BACKCHANNEL_LOGOUT_PRIVATE_ADDRESSES
// is on, so that a client cannot aim the server at its own network) fails the attempt, retried after
// 30 seconds, then 1, 2, 4, ... minutes, at most 30 minutes apart; after MAX_ATTEMPTS it stays failed.
// A sign-out never waits for any of this: delivery runs after the response (src/logout/deliver-soon.ts), and
// the sweep (src/logout/sweep.ts) picks up what that misses.
import { now, nowMs } from "@/clock";
import { db, write } from "@/db/client";
import { env } from "@/env";
import { log, redact } from "@/observability/log";
import { signLogoutToken } from "@/logout/logout-token";
import { checkedAddress, pinnedRequest } from "@/outbound/pinned-request";

export const MAX_ATTEMPTS = 10;
export const BASE_BACKOFF_MS = 30_000;
export const MAX_BACKOFF_MS = 30 * 60_000;
export const SEND_TIMEOUT_MS = 10_000;
/** A claim older than this belongs to a process that died; the delivery is claimed again. */
export const STALE_CLAIM_MS = 2 * 60_000;
const BATCH = 25;
const MAX_PER_RUN = 500;

export function logoutBackoffMs(attempts: number): number {
  return Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.max(0, attempts - 1));
}

export type LogoutDeliveryResult = { sent: number; failed: number; gaveUp: number };

function claimable(at: Date) {
  return {
    OR: [
      { status: "pending", nextAttemptAt: { lte: at } },
      { status: "sending", claimedAt: { lt: new Date(at.getTime() - STALE_CLAIM_MS) }, attempts: { lt: MAX_ATTEMPTS } },
    ],
  };
}

const errorText = (error: unknown) => redact(error instanceof Error ? error.message : String(error)).slice(0, 500) || "unknown error";

async function claim(id: number): Promise<Date | null> {
  const at = now();
  const claimed = await write((tx) => tx.logoutDelivery.updateMany({ where: { id, ...claimable(at) }, data: { status: "sending", claimedAt: at, attempts: { increment: 1 } } }));
  return claimed.count === 1 ? at : null;
}

/**
 * One POST to the receiver, over a connection to an address checked first (src/outbound/pinned-request.ts:
 * public only, unless BACKCHANNEL_LOGOUT_PRIVATE_ADDRESSES is on); throws unless it answers 2xx.
 */
async function post(uri: string, logoutToken: string): Promise<void> {
  const url = new URL(uri);
  const signal = AbortSignal.timeout(SEND_TIMEOUT_MS);
  const target = await checkedAddress(url, env().backchannelLogoutPrivateAddresses);
  const body = new URLSearchParams({ logout_token: logoutToken }).toString();
  const status = await new Promise<number>((resolve, reject) => {
    const request = pinnedRequest(
      url,
      target,
      { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", "content-length": String(Buffer.byteLength(body)) }, signal },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
  if (status < 200 || status > 299) throw new Error(`the receiver answered ${status}`);
}

async function attempt(id: number, result: LogoutDeliveryResult): Promise<void> {
  const claimedAt = await claim(id);
  if (!claimedAt) return;
  const row = await (await db()).logoutDelivery.findUniqueOrThrow({ where: { id }, include: { client: { select: { clientId: true, backchannelLogoutUri: true } } } });
  const ours = { id, status: "sending", claimedAt };
  try {
    const uri = row.client.backchannelLogoutUri;
    if (!uri) throw new Error("the client no longer has a backchannel_logout_uri");
    await post(uri, await signLogoutToken({ clientId: row.client.clientId, sub: row.sub, sid: row.sid, jti: row.jti }));
    await write((tx) => tx.logoutDelivery.updateMany({ where: ours, data: { status: "sent", sentAt: now(), lastError: null } }));
    result.sent++;
    log.info("logout token delivered", { logoutId: id, client: row.client.clientId, attempts: row.attempts });
  } catch (error) {
    const lastError = errorText(error);
    const last = row.attempts >= MAX_ATTEMPTS || !row.client.backchannelLogoutUri;
    await write((tx) =>
      tx.logoutDelivery.updateMany({
        where: ours,
        data: last ? { status: "failed", lastError } : { status: "pending", lastError, nextAttemptAt: new Date(nowMs() + logoutBackoffMs(row.attempts)) },
      }),
    );
    result.failed++;
    if (last) result.gaveUp++;
    log.warn(last ? "logout token delivery failed for good" : "logout token delivery failed, will retry", { logoutId: id, client: row.client.clientId, attempts: row.attempts, error: lastError });
  }
}

/** Delivers the logout tokens that are due (or only `ids`). Safe to run any number of times at once, anywhere. */
export async function deliverLogoutsDue(options: { ids?: number[] } = {}): Promise<LogoutDeliveryResult> {
  const result: LogoutDeliveryResult = { sent: 0, failed: 0, gaveUp: 0 };
  await write((tx) =>
    tx.logoutDelivery.updateMany({
      where: { status: "sending", claimedAt: { lt: new Date(nowMs() - STALE_CLAIM_MS) }, attempts: { gte: MAX_ATTEMPTS }, ...(options.ids ? { id: { in: options.ids } } : {}) },
      data: { status: "failed", lastError: "interrupted during the last attempt" },
    }),
  );
  const tried = new Set<number>();
  while (tried.size < MAX_PER_RUN) {
    const due = await (await db()).logoutDelivery.findMany({
      where: { ...claimable(now()), id: { in: options.ids, notIn: [...tried] } },
      orderBy: [{ nextAttemptAt: "asc" }, { id: "asc" }],
      take: BATCH,
      select: { id: true },
    });
    if (due.length === 0) break;
    for (const { id } of due) {
      tried.add(id);
      await attempt(id, result);
    }
  }
  return result;
}
