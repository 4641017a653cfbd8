import { z } from "zod";
import { visibleBundles } from "@/bundles/access";
import { ZBundleReference } from "@/bundles/bundle-reference";
import { now } from "@/clock";
import { PERMISSION_INCLUDE, representBundlePermission } from "@/bundle-permissions/represent";
import { badRequest, conflict, forbidden } from "@/http/errors";
import { parseInput } from "@/http/validate";
import { db, write } from "@/db/client";
import { findUserByReference, ZUserReference } from "@/users/user-reference";

export const ZCreateBundlePermission = z.object({ bundle: ZBundleReference, user_allowed: ZUserReference });

export const ALREADY_ALLOWED = "user_allowed: already has access to this bundle";

/**
 * POST /api/bundle_permission/: the bundle's owner grants a user access directly (no mail, no token).
 * A bundle the caller cannot see is "no such bundle"; one they were only allowed into is a 403.
 * A user who already has access (the owner included) is a 409, also when two grants race (unique index).
 */
export async function createBundlePermission(options: { ownerId: number; body: Record<string, unknown> }) {
  const input = parseInput(ZCreateBundlePermission, options.body);
  const client = await db();
  const bundle = await client.bundle.findFirst({ where: { AND: [{ id: input.bundle }, visibleBundles(options.ownerId)] } });
  if (!bundle) throw badRequest("bundle: no such bundle");
  if (bundle.ownerId !== options.ownerId) throw forbidden("only the bundle's owner can grant access to it");
  const allowed = await findUserByReference(input.user_allowed);
  if (!allowed) throw badRequest("user_allowed: no such user");
  if (allowed.id === bundle.ownerId) throw conflict(ALREADY_ALLOWED);
  try {
    const row = await write((tx) =>
      tx.bundlePermission.create({
        data: { bundleId: bundle.id, userAllowedId: allowed.id, userTargetId: bundle.ownerId, createdAt: now() },
        include: PERMISSION_INCLUDE,
      }),
    );
    return representBundlePermission(row, options.ownerId);
  } catch (error) {
    if ((error as { code?: string }).code === "P2002") throw conflict(ALREADY_ALLOWED);
    throw error;
  }
}
