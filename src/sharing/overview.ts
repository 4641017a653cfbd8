// What /settings/sharing shows: the user's bundles with who may read them, and the pending permission
// requests the user sent or received. People are shown under the e-mail visibility rule (CONTRACT.md 14,
// src/users/email-visibility.ts): the page gets each person's e-mail only where the viewer may see it, so
// that nothing renders more than the rule allows (letting a user id into your own bundle does not reveal
// their address).
import { nowMs } from "@/clock";
import { db } from "@/server/db";
import { permissionRequestContext, visiblePerson } from "@/users/email-visibility";

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
  return {
    bundles: bundles.map((bundle) => ({
      id: bundle.id,
      name: bundle.name,
      permissions: bundle.permissions.map((permission) => ({
        id: permission.id,
        createdAt: permission.createdAt,
        person: visiblePerson(permission.userAllowed, userId),
      })),
    })),
    sent: sent.map((request) => ({
      id: request.id,
      bundleName: request.bundle.name,
      expiresAt: request.expiresAt,
      userTarget: visiblePerson(request.userTarget, userId, permissionRequestContext(request)),
      userAllowed: visiblePerson(request.userAllowed, userId, permissionRequestContext(request)),
    })),
    received: received.map((request) => ({
      id: request.id,
      bundleName: request.bundle.name,
      expiresAt: request.expiresAt,
      requestedBy: visiblePerson(request.requestedBy, userId, permissionRequestContext(request)),
      userAllowed: visiblePerson(request.userAllowed, userId, permissionRequestContext(request)),
    })),
  };
}
