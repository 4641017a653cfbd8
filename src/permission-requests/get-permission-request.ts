import { nowMs } from "@/clock";
import { notFound } from "@/http/errors";
import { db } from "@/db/client";
import { REQUEST_INCLUDE, representPermissionRequest, requestParties } from "@/permission-requests/represent";

export const NO_SUCH_REQUEST = "no such permission request";

/**
 * GET /api/bundle_permission_request/<id>/ (docs/rules/permission-requests.md#listing-and-reading): a party to
 * the request, whatever became of it; anyone else 404.
 */
export async function getPermissionRequest(options: { id: number; viewerId: number }) {
  const row = await (await db()).permissionRequest.findFirst({
    where: { AND: [{ id: options.id }, requestParties(options.viewerId)] },
    include: REQUEST_INCLUDE,
  });
  if (!row) throw notFound(NO_SUCH_REQUEST);
  return representPermissionRequest(row, options.viewerId, nowMs());
}
