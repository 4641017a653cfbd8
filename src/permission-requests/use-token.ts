// The token half of `/api/bundle_permission_request/<token>/`
// (docs/rules/permission-requests.md#checking-a-token, docs/rules/permission-requests.md#redeeming): check
// (GET) and redeem (PUT). Only user_target may use a token (docs/rules/specification.md#permission-requests):
// 404 for an unknown token, 403 for anyone else, 410 once the request is no longer pending (redeemed,
// declined, expired or deleted). Nothing is ever redeemed by a GET, since mail scanners follow links.
import { recordEventInTx } from "@/audit/record-event";
import { nowMs } from "@/clock";
import { forbidden, gone, notFound } from "@/http/errors";
import { isFirstParty, type Principal } from "@/resource/authenticate";
import { digest } from "@/secrets";
import { db, write } from "@/db/client";
import { NO_SUCH_REQUEST } from "@/permission-requests/get-permission-request";
import { endedReason, REQUEST_INCLUDE, representPermissionRequest, requestParties, type RequestWithRelations } from "@/permission-requests/represent";

const UNKNOWN_TOKEN = "no such permission request token";
const NOT_TARGET = "only the user asked (user_target) can use this token";
const THIRD_PARTY = "permission tokens are redeemed on this service's own pages, not by third-party applications";

/** The request a token belongs to, checked for the caller: 404, 403 or 410, else the row. */
async function usableRequest(token: string, viewerId: number) {
  const row = await (await db()).permissionRequest.findUnique({ where: { tokenDigest: digest(token) }, include: REQUEST_INCLUDE });
  if (!row) throw notFound(UNKNOWN_TOKEN);
  if (row.userTargetId !== viewerId) throw forbidden(NOT_TARGET);
  const reason = endedReason(row, nowMs());
  if (reason) throw gone(reason);
  return row;
}

/** GET: lets user_target verify a token before redeeming it. */
export async function checkPermissionToken(options: { token: string; viewerId: number }) {
  const row = await usableRequest(options.token, options.viewerId);
  return representPermissionRequest(row, options.viewerId, nowMs());
}

/**
 * PUT: user_target redeems the token, from the service's own pages or a first-party client only
 * (docs/rules/specification.md#what-the-service-does: a third-party client may start a request but never
 * complete it).
 */
export async function redeemPermissionToken(options: { token: string; principal: Principal }) {
  const { principal } = options;
  if (!isFirstParty(principal)) throw forbidden(THIRD_PARTY);
  return redeem(await usableRequest(options.token, principal.userId), principal);
}

/**
 * The owner accepts a request by its id on the Sharing page (docs/rules/pages.md#accepting-on-the-sharing-page),
 * signed in as user_target: the same redeem as the token's, with the same answers, except that anyone who is
 * not a party to the request gets the 404 of a read (docs/rules/permission-requests.md#listing-and-reading).
 */
export async function acceptPermissionRequest(options: { id: number; principal: Principal }) {
  const { principal } = options;
  if (!isFirstParty(principal)) throw forbidden(THIRD_PARTY);
  const row = await (await db()).permissionRequest.findFirst({ where: { AND: [{ id: options.id }, requestParties(principal.userId)] }, include: REQUEST_INCLUDE });
  if (!row) throw notFound(NO_SUCH_REQUEST);
  if (row.userTargetId !== principal.userId) throw forbidden(NOT_TARGET);
  const reason = endedReason(row, nowMs());
  if (reason) throw gone(reason);
  return redeem(row, principal);
}

/**
 * The claim is one conditional update, the first statement of the transaction that also creates the bundle
 * permission, so that of any number of concurrent redeems exactly one succeeds and the permission exists
 * exactly when the request is redeemed.
 */
async function redeem(row: RequestWithRelations, principal: Principal) {
  const claim = async () =>
    write(async (tx) => {
      const at = new Date(nowMs());
      const claimed = await tx.permissionRequest.updateMany({
        where: { id: row.id, status: "pending", deletedAt: null, expiresAt: { gt: at } },
        data: { status: "redeemed", redeemedAt: at, endedAt: at, pendingKey: null },
      });
      if (claimed.count === 0) return false;
      await recordEventInTx(tx, { type: "permission_request.redeemed", userId: row.userTargetId, detail: { request: row.id, bundle: row.bundle.id, user_allowed: row.userAllowedId } });
      const key = { bundleId: row.bundle.id, userAllowedId: row.userAllowedId };
      // The owner may have granted the same access directly in the meantime: then it is already there.
      if (!(await tx.bundlePermission.findUnique({ where: { bundleId_userAllowedId: key } }))) {
        await tx.bundlePermission.create({ data: { ...key, userTargetId: row.userTargetId, createdAt: at } });
      }
      return true;
    });
  let redeemed: boolean;
  try {
    redeemed = await claim();
  } catch (error) {
    // A direct grant committed between our read and our insert (PostgreSQL): the claim rolled back with it,
    // and the second try finds the permission.
    if ((error as { code?: string }).code !== "P2002") throw error;
    redeemed = await claim();
  }
  const fresh = await (await db()).permissionRequest.findUnique({ where: { id: row.id }, include: REQUEST_INCLUDE });
  if (!fresh) throw notFound(UNKNOWN_TOKEN); // its bundle was deleted meanwhile
  if (!redeemed) throw gone(endedReason(fresh, nowMs()) ?? "this request has already been redeemed");
  return representPermissionRequest(fresh, principal.userId, nowMs());
}
