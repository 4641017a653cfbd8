import { nowMs } from "@/clock";
import { collection, type PageRequest } from "@/http/collection";
import { db } from "@/db/client";
import { REQUEST_INCLUDE, representPermissionRequest, requestParties } from "@/permission-requests/represent";

/** GET /api/bundle_permission_request/: where the user is requester, target or allowed user; newest first; no deleted ones. */
export async function listPermissionRequests(options: { viewerId: number; page: PageRequest }) {
  const { viewerId, page } = options;
  const client = await db();
  const where = { AND: [requestParties(viewerId), { deletedAt: null }] };
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
