import { permissionParties, PERMISSION_INCLUDE, representBundlePermission } from "@/bundle-permissions/represent";
import { collection, type PageRequest } from "@/http/collection";
import { db } from "@/db/client";

/**
 * GET /api/bundle_permission/: the permissions where the user is either party, newest first; `allowedOnly`:
 * only those that let the user into someone's bundle (the MCP tool list_shared_with_me, docs/rules/agents.md#tools).
 */
export async function listBundlePermissions(options: { viewerId: number; page: PageRequest; allowedOnly?: boolean }) {
  const { viewerId, page } = options;
  const client = await db();
  const where = options.allowedOnly ? { userAllowedId: viewerId } : permissionParties(viewerId);
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
