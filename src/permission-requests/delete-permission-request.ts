// DELETE /api/bundle_permission_request/<id>/ (docs/rules/permission-requests.md#deleting-and-declining): the
// requester withdraws a pending request, or the target declines it, and a decline mails the requester
// (docs/rules/permission-requests.md#declining-mails-the-requester) through the outbox, in the same
// transaction.
import { recordEventInTx } from "@/audit/record-event";
import { now } from "@/clock";
import { deliverSoon } from "@/email/deliver-soon";
import { enqueueMail, type OutgoingMail } from "@/email/outbox";
import { renderPermissionRequestDeclinedMail } from "@/email/permission-request-declined-mail";
import { env } from "@/env";
import { formatDateTime } from "@/format/date-time";
import { conflict, forbidden, notFound } from "@/http/errors";
import { db, write } from "@/db/client";
import { NO_SUCH_REQUEST } from "@/permission-requests/get-permission-request";
import { REQUEST_INCLUDE, type RequestWithRelations } from "@/permission-requests/represent";
import { permissionRequestContext, personLabel, visiblePerson } from "@/users/email-visibility";

const REDEEMED = "this request was redeemed: revoke the bundle permission instead";

/** The mail to the requester, rendered before the transaction; none when the owner declines their own request. */
async function declinedMail(row: RequestWithRelations, at: Date): Promise<OutgoingMail | null> {
  if (row.requestedById === row.userTargetId) return null;
  const context = permissionRequestContext(row);
  const seen = (user: RequestWithRelations["userTarget"]) => personLabel(visiblePerson(user, row.requestedById, context));
  return renderPermissionRequestDeclinedMail(row.requestedBy.email, {
    requesterName: row.requestedBy.name,
    owner: seen(row.userTarget),
    allowed: row.userAllowedId === row.requestedById ? null : seen(row.userAllowed),
    bundleName: row.bundle.name,
    askedAt: formatDateTime(row.createdAt),
    declinedAt: formatDateTime(at),
    sharingUrl: new URL("/settings/sharing#requests-you-sent", env().appUrl).href,
  });
}

/**
 * The requester withdraws it, or the target declines it. The allowed user (when not also one of those) gets
 * 403; anyone else, and a request that already ended that way, 404. A redeemed request is a 409. The record
 * is kept (its status says what became of it, and its token answers 410) until `tokens:prune` removes it.
 */
export async function deletePermissionRequest(options: { id: number; viewerId: number }): Promise<void> {
  const { id, viewerId } = options;
  const row = await (await db()).permissionRequest.findUnique({ where: { id }, include: REQUEST_INCLUDE });
  if (!row || row.deletedAt) throw notFound(NO_SUCH_REQUEST);
  const isTarget = row.userTargetId === viewerId;
  const isRequester = row.requestedById === viewerId;
  if (!isTarget && !isRequester) {
    if (row.userAllowedId === viewerId) throw forbidden("only the requester or user_target can delete this request");
    throw notFound(NO_SUCH_REQUEST);
  }
  if (row.status === "redeemed") throw conflict(REDEEMED);
  const at = now();
  const mail = isTarget ? await declinedMail(row, at) : null;
  // One conditional write: a redeem or another delete racing this one makes it match nothing.
  const ended = await write(async (tx) => {
    const result = await tx.permissionRequest.updateMany({
      where: { id, deletedAt: null, status: "pending" },
      data: { deletedAt: at, endedAt: at, pendingKey: null, ...(isTarget ? { status: "declined" } : {}) },
    });
    let mailId: number | null = null;
    if (result.count === 1 && isTarget) {
      await recordEventInTx(tx, { type: "permission_request.declined", userId: viewerId, detail: { request: id, bundle: row.bundleId, requested_by: row.requestedById } });
      if (mail) mailId = await enqueueMail(tx, mail, { permissionRequestId: id });
    }
    return { count: result.count, mailId };
  });
  if (ended.count === 1) {
    if (ended.mailId !== null) deliverSoon([ended.mailId]);
    return;
  }
  const current = await (await db()).permissionRequest.findUnique({ where: { id }, select: { status: true } });
  if (current?.status === "redeemed") throw conflict(REDEEMED);
  throw notFound(NO_SUCH_REQUEST);
}
