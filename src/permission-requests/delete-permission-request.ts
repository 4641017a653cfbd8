import { recordEventInTx } from "@/audit/record-event";
import { now } from "@/clock";
import { conflict, forbidden, notFound } from "@/http/errors";
import { db, write } from "@/db/client";
import { NO_SUCH_REQUEST } from "@/permission-requests/get-permission-request";

const REDEEMED = "this request was redeemed: revoke the bundle permission instead";

/**
 * DELETE /api/bundle_permission_request/<id>/ (docs/rules/permission-requests.md#deleting-and-declining): the
 * requester withdraws it, or the target declines it. The allowed user (when not also one of those) gets 403;
 * anyone else 404. A redeemed request is a 409. The record is kept, hidden from lists, so that its token
 * answers 410 until `tokens:prune` removes it.
 */
export async function deletePermissionRequest(options: { id: number; viewerId: number }): Promise<void> {
  const { id, viewerId } = options;
  const row = await (await db()).permissionRequest.findUnique({ where: { id } });
  if (!row || row.deletedAt) throw notFound(NO_SUCH_REQUEST);
  const isTarget = row.userTargetId === viewerId;
  const isRequester = row.requestedById === viewerId;
  if (!isTarget && !isRequester) {
    if (row.userAllowedId === viewerId) throw forbidden("only the requester or user_target can delete this request");
    throw notFound(NO_SUCH_REQUEST);
  }
  if (row.status === "redeemed") throw conflict(REDEEMED);
  const at = now();
  // One conditional write: a redeem or another delete racing this one makes it match nothing.
  const ended = await write(async (tx) => {
    const result = await tx.permissionRequest.updateMany({
      where: { id, deletedAt: null, status: "pending" },
      data: { deletedAt: at, endedAt: at, pendingKey: null, ...(isTarget ? { status: "declined" } : {}) },
    });
    if (result.count === 1 && isTarget) {
      await recordEventInTx(tx, { type: "permission_request.declined", userId: viewerId, detail: { request: id, bundle: row.bundleId, requested_by: row.requestedById } });
    }
    return result;
  });
  if (ended.count === 1) return;
  const current = await (await db()).permissionRequest.findUnique({ where: { id }, select: { status: true } });
  if (current?.status === "redeemed") throw conflict(REDEEMED);
  throw notFound(NO_SUCH_REQUEST);
}
