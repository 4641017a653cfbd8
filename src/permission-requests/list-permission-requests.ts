import { nowMs } from "@/clock";
import { collection, type PageRequest } from "@/http/collection";
import { db } from "@/db/client";
import { REQUEST_INCLUDE, representPermissionRequest, requestParties } from "@/permission-requests/represent";

/**
 * GET /api/bundle_permission_request/ (docs/rules/permission-requests.md#listing-and-reading): where the user is
 * requester, target or allowed user, whatever became of them (declined and withdrawn ones too); newest first.
 */
export async function listPermissionRequests(options: { viewerId: number; page: PageRequest }) {
  const { viewerId, page } = options;
  const client = await db();
  const where = requestParties(viewerId);
  const [total, rows] = await Promise.all([
    client.permissionRequest.count({ where }),
    client.permissionRequest.findMany({
      where,
      include: REQUEST_INCLUDE,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      skip: page.offset,
      take: page.limit,
    }),
  ]);
  const at = nowMs();
  return collection(page, total, rows.map((row) => representPermissionRequest(row, viewerId, at)));
}
