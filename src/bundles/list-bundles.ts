import { visibleBundles } from "@/bundles/access";
import { representBundle } from "@/bundles/represent";
import { collection, type PageRequest } from "@/http/collection";
import { db } from "@/db/client";

/** GET /api/bundle/: the bundles the user owns or was allowed into, newest first. */
export async function listBundles(options: { viewerId: number; page: PageRequest }) {
  const { viewerId, page } = options;
  const client = await db();
  const where = visibleBundles(viewerId);
  const [total, rows] = await Promise.all([
    client.bundle.count({ where }),
    client.bundle.findMany({
      where,
      include: { owner: true },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      skip: page.offset,
      take: page.limit,
    }),
  ]);
  return collection(page, total, rows.map((row) => representBundle(row, viewerId)));
}
