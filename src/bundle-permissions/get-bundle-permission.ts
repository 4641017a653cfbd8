import { permissionParties, PERMISSION_INCLUDE, representBundlePermission } from "@/bundle-permissions/represent";
import { notFound } from "@/http/errors";
import { db } from "@/db/client";

/** GET /api/bundle_permission/<id>/: either party; 404 for anyone else. */
export async function getBundlePermission(options: { id: string; viewerId: number }) {
  if (!/^\d{1,12}$/.test(options.id)) throw notFound("no such bundle permission");
  const row = await (await db()).bundlePermission.findFirst({
    where: { AND: [{ id: Number(options.id) }, permissionParties(options.viewerId)] },
    include: PERMISSION_INCLUDE,
  });
  if (!row) throw notFound("no such bundle permission");
  return representBundlePermission(row, options.viewerId);
}
