import type { BundlePermissionRow } from "@/db/collection-sql";
import { representBundle } from "@/bundles/represent";
import { representUser } from "@/users/represent";

export const bundlePermissionUri = (id: number) => `/api/bundle_permission/${id}/`;

/** What a representation needs loaded with the row. */
export const PERMISSION_INCLUDE = { bundle: { include: { owner: true } }, userAllowed: true, userTarget: true } as const;

/** A permission as read with what it references: by src/db/collection-sql.ts, or by Prisma with PERMISSION_INCLUDE. */
export type PermissionWithRelations = BundlePermissionRow;

/**
 * docs/rules/permission-requests.md#bundle-permissions: {id, resource_uri, bundle, user_allowed, user_target
 * (the owner who granted it), created_at}.
 */
export function representBundlePermission(permission: PermissionWithRelations, viewerId: number) {
  return {
    id: permission.id,
    resource_uri: bundlePermissionUri(permission.id),
    bundle: representBundle(permission.bundle, viewerId),
    user_allowed: representUser(permission.userAllowed, viewerId),
    user_target: representUser(permission.userTarget, viewerId),
    created_at: permission.createdAt.toISOString(),
  };
}

/** Either party: the allowed user or the owner who granted the access. */
export const permissionParties = (userId: number) => ({ OR: [{ userAllowedId: userId }, { userTargetId: userId }] });
