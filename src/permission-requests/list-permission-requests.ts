// GET /api/bundle_permission_request/ (docs/rules/permission-requests.md#listing-and-reading): where the user is
// requester, target or allowed user (requestParties()), whatever became of them (declined and withdrawn ones
// too), newest first, in the collection envelope (docs/rules/endpoints.md#collections); one statement
// (src/db/collection-sql.ts), the page kept while nothing changes (src/db/page-cache.ts) and, with a pending
// request on it, until the first of them expires: its status then reads "expired".
import { nowMs } from "@/clock";
import { permissionRequestPage } from "@/db/collection-sql";
import { cachedPage } from "@/db/page-cache";
import { collection, keptCollection, pageName, type Collection, type PageRequest } from "@/http/collection";
import { andThen, type MaybePromise } from "@/http/route";
import { representPermissionRequest } from "@/permission-requests/represent";

export function listPermissionRequests(options: { viewerId: number; page: PageRequest }): MaybePromise<Collection<ReturnType<typeof representPermissionRequest>>> {
  const { viewerId, page } = options;
  const at = nowMs();
  return cachedPage(pageName("bundle_permission_request", viewerId, page), at, () =>
    andThen(permissionRequestPage(viewerId, page), ({ total, rows }) => {
      let validUntilMs = Infinity;
      const objects = rows.map((row) => {
        const represented = representPermissionRequest(row, viewerId, at);
        if (represented.status === "pending") validUntilMs = Math.min(validUntilMs, row.expiresAt.getTime());
        return represented;
      });
      return keptCollection(collection(page, total, objects), validUntilMs);
    }),
  );
}
