// GET /api/bundle_permission_request/ (docs/rules/permission-requests.md#listing-and-reading): where the user is
// requester, target or allowed user (requestParties()), whatever became of them (declined and withdrawn ones
// too), newest first, in the collection envelope (docs/rules/endpoints.md#collections); one statement
// (src/db/collection-sql.ts).
import { nowMs } from "@/clock";
import { permissionRequestPage } from "@/db/collection-sql";
import { collection, type Collection, type PageRequest } from "@/http/collection";
import { andThen, type MaybePromise } from "@/http/route";
import { representPermissionRequest } from "@/permission-requests/represent";

export function listPermissionRequests(options: { viewerId: number; page: PageRequest }): MaybePromise<Collection<ReturnType<typeof representPermissionRequest>>> {
  const { viewerId, page } = options;
  return andThen(permissionRequestPage(viewerId, page), ({ total, rows }) => {
    const at = nowMs();
    return collection(page, total, rows.map((row) => representPermissionRequest(row, viewerId, at)));
  });
}
