import { permissionParties, PERMISSION_INCLUDE, representBundlePermission } from "@/bundle-permissions/represent";
import { collection, type PageRequest } from "@/http/collection";
import { db } from "@/db/client";

/** GET /api/bundle_permission/: the permissions where the user is either party, newest first. */
export async function listBundlePermissions(options: { viewerId: number; page: PageRequest }) {
  const { viewerId, page } = options;
  const client = await db();
  const where = permissionParties(viewerId);
  const [total, rows] = await Promise.all([
    client.bundlePermission.count({ where }),
    client.bundlePermission.findMany({
      where,
      include: PERMISSION_INCLUDE,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      skip: page.offset,
      take: page.limit,
    }),
  ]);
  return collection(page, total, rows.map((row) => representBundlePermission(row, viewerId)));
}
