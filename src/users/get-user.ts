import { notFound } from "@/http/errors";
import { db } from "@/server/db";
import { representUser } from "@/users/represent";

/** GET /api/user/<id>/: the representation to any authenticated caller; 404 for unknown ids. */
export async function getUser(options: { id: string; viewerId: number }) {
  if (!/^\d{1,12}$/.test(options.id)) throw notFound("no such user");
  const user = await (await db()).user.findUnique({ where: { id: Number(options.id) } });
  if (!user) throw notFound("no such user");
  return representUser(user, options.viewerId);
}
