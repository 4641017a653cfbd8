// GET /api/bundle/<id>/ (docs/rules/permission-requests.md#bundles): for the owner and allowed users
// (src/bundles/access.ts says who); 404 for anyone else, whether or not it exists. One statement
// (src/db/collection-sql.ts).
import { representBundle } from "@/bundles/represent";
import { visibleBundle } from "@/db/collection-sql";
import { notFound } from "@/http/errors";
import { andThen, type MaybePromise } from "@/http/route";

const NO_SUCH_BUNDLE = "no such bundle";

export function getBundle(options: { id: string; viewerId: number }): MaybePromise<ReturnType<typeof representBundle>> {
  if (!/^\d{1,12}$/.test(options.id)) throw notFound(NO_SUCH_BUNDLE);
  return andThen(visibleBundle(options.viewerId, Number(options.id)), (bundle) => {
    if (!bundle) throw notFound(NO_SUCH_BUNDLE);
    return representBundle(bundle, options.viewerId);
  });
}
