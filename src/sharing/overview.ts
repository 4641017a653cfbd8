// What /settings/sharing shows: the user's bundles with who may read them, and the pending permission
// requests the user sent or received.
import { nowMs } from "@/clock";
import { db } from "@/server/db";

export async function sharingOverview(userId: number) {
  const client = await db();
  const at = new Date(nowMs());
  const person = { select: { id: true, name: true, email: true } } as const;
  const [bundles, sent, received] = await Promise.all([
    client.bundle.findMany({
      where: { ownerId: userId },
      orderBy: { id: "asc" },
      include: { permissions: { include: { userAllowed: person }, orderBy: { id: "asc" } } },
    }),
    client.permissionRequest.findMany({
      where: { requestedById: userId, status: "pending", deletedAt: null, expiresAt: { gt: at } },
      orderBy: { id: "desc" },
      include: { bundle: { select: { name: true } }, userAllowed: person, userTarget: person },
    }),
    client.permissionRequest.findMany({
      where: { userTargetId: userId, status: "pending", deletedAt: null, expiresAt: { gt: at } },
      orderBy: { id: "desc" },
      include: { bundle: { select: { name: true } }, userAllowed: person, requestedBy: person },
    }),
  ]);
  return { bundles, sent, received };
}
