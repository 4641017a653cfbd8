import { visibleBundles } from "@/bundles/access";
import { representBundle } from "@/bundles/represent";
import { notFound } from "@/http/errors";
import { db } from "@/db/client";

const NO_SUCH_BUNDLE = "no such bundle";

/** GET /api/bundle/<id>/: for the owner and allowed users; 404 for anyone else, whether or not it exists. */
export async function getBundle(options: { id: string; viewerId: number }) {
  if (!/^\d{1,12}$/.test(options.id)) throw notFound(NO_SUCH_BUNDLE);
  const bundle = await (await db()).bundle.findFirst({
    where: { AND: [{ id: Number(options.id) }, visibleBundles(options.viewerId)] },
    include: { owner: true },
  });
  if (!bundle) throw notFound(NO_SUCH_BUNDLE);
  return representBundle(bundle, options.viewerId);
}
