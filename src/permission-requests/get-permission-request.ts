// GET /api/bundle_permission_request/<id>/ (docs/rules/permission-requests.md#listing-and-reading): a party to
// the request (requestParties()), whatever became of it; anyone else 404. One statement
// (src/db/collection-sql.ts).
import { nowMs } from "@/clock";
import { visiblePermissionRequest } from "@/db/collection-sql";
import { notFound } from "@/http/errors";
import { andThen, type MaybePromise } from "@/http/route";
import { representPermissionRequest } from "@/permission-requests/represent";

export const NO_SUCH_REQUEST = "no such permission request";

export function getPermissionRequest(options: { id: number; viewerId: number }): MaybePromise<ReturnType<typeof representPermissionRequest>> {
  return andThen(visiblePermissionRequest(options.viewerId, options.id), (row) => {
    if (!row) throw notFound(NO_SUCH_REQUEST);
    return representPermissionRequest(row, options.viewerId, nowMs());
  });
}
