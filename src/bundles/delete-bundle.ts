import { visibleBundles } from "@/bundles/access";
import { forbidden, notFound } from "@/http/errors";
import { db, write } from "@/db/client";

/**
 * DELETE /api/bundle/<id>/: the owner only. An allowed user, who can see the bundle, gets 403; anyone else
 * 404, whether or not it exists. Its permissions and permission requests go with it (foreign-key cascade),
 * so their tokens answer 404 from then on.
 */
export async function deleteBundle(options: { id: string; viewerId: number }): Promise<void> {
  if (!/^\d{1,12}$/.test(options.id)) throw notFound("no such bundle");
  const id = Number(options.id);
  const deleted = await write((tx) => tx.bundle.deleteMany({ where: { id, ownerId: options.viewerId } }));
  if (deleted.count === 1) return;
  const visible = await (await db()).bundle.count({ where: { AND: [{ id }, visibleBundles(options.viewerId)] } });
  if (visible) throw forbidden("only the bundle's owner can delete it");
  throw notFound("no such bundle");
}
