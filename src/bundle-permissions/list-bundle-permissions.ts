// GET /api/bundle_permission/ (docs/rules/permission-requests.md#bundle-permissions): the permissions where the
// user is either party (permissionParties()), newest first, in the collection envelope
// (docs/rules/endpoints.md#collections); one statement (src/db/collection-sql.ts), the page kept while nothing
// changes (src/db/page-cache.ts).
import { nowMs } from "@/clock";
import { representBundlePermission } from "@/bundle-permissions/represent";
import { bundlePermissionPage } from "@/db/collection-sql";
import { cachedPage } from "@/db/page-cache";
import { collection, keptCollection, pageName, type Collection, type PageRequest } from "@/http/collection";
import { andThen, type MaybePromise } from "@/http/route";

/**
 * `allowedOnly`: only those that let the user into someone's bundle (the MCP tool list_shared_with_me,
 * docs/rules/agents.md#tools).
 */
export function listBundlePermissions(options: { viewerId: number; page: PageRequest; allowedOnly?: boolean }): MaybePromise<Collection<ReturnType<typeof representBundlePermission>>> {
  const { viewerId, page } = options;
  const allowedOnly = options.allowedOnly ?? false;
  return cachedPage(pageName(allowedOnly ? "bundle_permission allowed" : "bundle_permission", viewerId, page), nowMs(), () =>
    andThen(bundlePermissionPage(viewerId, page, allowedOnly), ({ total, rows }) =>
      keptCollection(collection(page, total, rows.map((row) => representBundlePermission(row, viewerId)))),
    ),
  );
}
