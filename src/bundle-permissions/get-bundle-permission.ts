// GET /api/bundle_permission/<id>/ (docs/rules/permission-requests.md#bundle-permissions): either party
// (permissionParties()); 404 for anyone else. One statement (src/db/collection-sql.ts).
import { representBundlePermission } from "@/bundle-permissions/represent";
import { visibleBundlePermission } from "@/db/collection-sql";
import { notFound } from "@/http/errors";
import { andThen, type MaybePromise } from "@/http/route";

export function getBundlePermission(options: { id: string; viewerId: number }): MaybePromise<ReturnType<typeof representBundlePermission>> {
  if (!/^\d{1,12}$/.test(options.id)) throw notFound("no such bundle permission");
  return andThen(visibleBundlePermission(options.viewerId, Number(options.id)), (row) => {
    if (!row) throw notFound("no such bundle permission");
    return representBundlePermission(row, options.viewerId);
  });
}
