import { notFound } from "@/http/errors";
import { db } from "@/db/client";
import type { MaybePromise } from "@/http/route";
import { fixedJson } from "@/http/respond";
import { representUser, type UserRepresentation } from "@/users/represent";

type Viewer = { id: number; name: string; email: string };

// A caller's own representation, once per viewer object: a token answered from the cache brings the same one
// every time (src/resource/authenticate.ts), and its JSON is then made once (fixedJson()).
const selves = new WeakMap<Viewer, UserRepresentation>();

/**
 * GET /api/user/<id>/: the representation to any authenticated caller; 404 for unknown ids
 * (docs/rules/permission-requests.md#users). A caller reading themself is answered at once from the row read
 * with their token (src/resource/authenticate.ts), without a second read (nor a promise: src/http/route.ts, andThen()).
 */
export function getUser(options: { id: string; viewer: Viewer }): MaybePromise<UserRepresentation> {
  if (!/^\d{1,12}$/.test(options.id)) throw notFound("no such user");
  const id = Number(options.id);
  if (id === options.viewer.id) {
    let self = selves.get(options.viewer);
    if (self === undefined) selves.set(options.viewer, (self = fixedJson(representUser(options.viewer, options.viewer.id))));
    return self;
  }
  return someoneElse(id, options.viewer.id);
}

async function someoneElse(id: number, viewerId: number): Promise<UserRepresentation> {
  const user = await (await db()).user.findUnique({ where: { id } });
  if (!user) throw notFound("no such user");
  return representUser(user, viewerId);
}
