// GET /api/bundle/ (docs/rules/permission-requests.md#bundles): the bundles the user owns or was allowed into
// (src/bundles/access.ts says who), newest first, in the collection envelope (docs/rules/endpoints.md#collections);
// one statement (src/db/collection-sql.ts), the page kept while nothing changes (src/db/page-cache.ts).
import { nowMs } from "@/clock";
import { representBundle } from "@/bundles/represent";
import { bundlePage } from "@/db/collection-sql";
import { cachedPage } from "@/db/page-cache";
import { collection, keptCollection, pageName, type Collection, type PageRequest } from "@/http/collection";
import { andThen, type MaybePromise } from "@/http/route";

export function listBundles(options: { viewerId: number; page: PageRequest }): MaybePromise<Collection<ReturnType<typeof representBundle>>> {
  const { viewerId, page } = options;
  return cachedPage(pageName("bundle", viewerId, page), nowMs(), () =>
    andThen(bundlePage(viewerId, page), ({ total, rows }) => keptCollection(collection(page, total, rows.map((row) => representBundle(row, viewerId))))),
  );
}
