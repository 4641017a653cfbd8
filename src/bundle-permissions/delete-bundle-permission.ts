import { permissionParties } from "@/bundle-permissions/represent";
import { notFound } from "@/http/errors";
import { write } from "@/db/client";

/**
 * DELETE /api/bundle_permission/<id>/: either party revokes the access (the owner takes it back, the allowed
 * user gives it up). One conditional delete; access is checked against these rows on every request, so it
 * ends at once. 404 for anyone else and for an unknown or already revoked permission.
 */
export async function deleteBundlePermission(options: { id: string; viewerId: number }): Promise<void> {
  if (!/^\d{1,12}$/.test(options.id)) throw notFound("no such bundle permission");
  const deleted = await write((tx) =>
    tx.bundlePermission.deleteMany({ where: { AND: [{ id: Number(options.id) }, permissionParties(options.viewerId)] } }),
  );
  if (deleted.count === 0) throw notFound("no such bundle permission");
}
