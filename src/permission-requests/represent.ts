// The bundle_permission_request record (docs/rules/permission-requests.md#the-request-record). The token is
// not a column of it and never appears in any representation: only its digest is stored.
import type { PermissionRequest } from "@/generated/sqlite/client";
import type { PermissionRequestRow } from "@/db/collection-sql";
import { representBundle } from "@/bundles/represent";
import { permissionRequestContext } from "@/users/email-visibility";
import { representUser } from "@/users/represent";

export const permissionRequestUri = (id: number) => `/api/bundle_permission_request/${id}/`;

export const REQUEST_INCLUDE = {
  bundle: { include: { owner: true } },
  userAllowed: true,
  userTarget: true,
  requestedBy: true,
} as const;

/** A request as read with what it references: by src/db/collection-sql.ts, or by Prisma with REQUEST_INCLUDE. */
export type RequestWithRelations = PermissionRequestRow;

export type RequestStatus = "pending" | "redeemed" | "declined" | "withdrawn" | "expired";

/**
 * What became of a request (docs/rules/permission-requests.md#the-request-record). `withdrawn` and `expired`
 * are not stored: a request its requester deleted while pending reads as withdrawn, and a pending one whose
 * token has passed its expiry as expired.
 */
export function statusOf(row: Pick<PermissionRequest, "status" | "expiresAt" | "deletedAt">, atMs: number): RequestStatus {
  if (row.status === "redeemed" || row.status === "declined") return row.status;
  if (row.deletedAt) return "withdrawn";
  return row.expiresAt.getTime() <= atMs ? "expired" : "pending";
}

/** Why a token can no longer be used (410), or null while it can. */
export function endedReason(row: Pick<PermissionRequest, "status" | "expiresAt" | "deletedAt">, atMs: number): string | null {
  if (row.status === "redeemed") return "this request has already been redeemed";
  if (row.status === "declined") return "this request was declined";
  if (row.deletedAt) return "this request was deleted";
  if (row.expiresAt.getTime() <= atMs) return "this request has expired";
  return null;
}

export function representPermissionRequest(row: RequestWithRelations, viewerId: number, atMs: number) {
  const context = permissionRequestContext(row);
  return {
    id: row.id,
    resource_uri: permissionRequestUri(row.id),
    bundle: representBundle(row.bundle, viewerId),
    user_allowed: representUser(row.userAllowed, viewerId, context),
    user_target: representUser(row.userTarget, viewerId, context),
    requested_by: representUser(row.requestedBy, viewerId, context),
    redeem_url: row.redeemUrl,
    ttl: row.ttl,
    status: statusOf(row, atMs),
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    redeemed_at: row.redeemedAt?.toISOString() ?? null,
  };
}

/** The requester, the target and the allowed user. */
export const requestParties = (userId: number) => ({
  OR: [{ requestedById: userId }, { userTargetId: userId }, { userAllowedId: userId }],
});
