import { notFound } from "@/http/errors";
import { db } from "@/server/db";
import { representUser } from "@/users/represent";

type Viewer = { id: number; name: string; email: string };

/**
 * GET /api/user/<id>/: the representation to any authenticated caller; 404 for unknown ids (CONTRACT.md 2).
 * A caller reading themself is answered from the row read with their token (src/http/auth.ts), without a
 * second read.
 */
export async function getUser(options: { id: string; viewer: Viewer }) {
  if (!/^\d{1,12}$/.test(options.id)) throw notFound("no such user");
  const id = Number(options.id);
  const user = id === options.viewer.id ? options.viewer : await (await db()).user.findUnique({ where: { id } });
  if (!user) throw notFound("no such user");
  return representUser(user, options.viewer.id);
}
