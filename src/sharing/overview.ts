// What /settings/sharing shows (docs/rules/pages.md#sharing): the user's bundles with who may read them, the
// bundles others let the user into, the pending permission requests the user received, and the requests the
// user sent, with what became of each (pending, accepted, declined, withdrawn or expired, as the API's `status`:
// docs/rules/permission-requests.md#listing-and-reading). People are shown under the e-mail visibility rule
// (docs/rules/permission-requests.md#who-sees-an-e-mail-address, src/users/email-visibility.ts): the page gets
// each person's e-mail only where the viewer may see it, so that nothing renders more than the rule allows
// (letting a user id into your own bundle does not reveal their address).
import { nowMs } from "@/clock";
import { db } from "@/db/client";
import { statusOf, type RequestStatus } from "@/permission-requests/represent";
import { permissionRequestContext, visiblePerson } from "@/users/email-visibility";

/** How far back "Requests you sent" goes. */
export const SENT_REQUESTS_DAYS = 30;
const SENT_REQUESTS_SHOWN = 50;

export async function sharingOverview(userId: number) {
  const client = await db();
  const atMs = nowMs();
  const at = new Date(atMs);
  const person = { select: { id: true, name: true, email: true } } as const;
  const [bundles, allowedInto, sent, received] = await Promise.all([
    client.bundle.findMany({
      where: { ownerId: userId },
      orderBy: { id: "asc" },
      include: { permissions: { include: { userAllowed: person }, orderBy: { id: "asc" } } },
    }),
    client.bundlePermission.findMany({
      where: { userAllowedId: userId },
      orderBy: { id: "desc" },
      include: { bundle: { include: { owner: person } } },
    }),
    client.permissionRequest.findMany({
      where: { requestedById: userId, createdAt: { gt: new Date(atMs - SENT_REQUESTS_DAYS * 24 * 3600 * 1000) } },
      orderBy: { id: "desc" },
      take: SENT_REQUESTS_SHOWN,
      include: { bundle: { select: { id: true, name: true } }, userAllowed: person, userTarget: person },
    }),
    client.permissionRequest.findMany({
      where: { userTargetId: userId, status: "pending", deletedAt: null, expiresAt: { gt: at } },
      orderBy: { id: "desc" },
      include: { bundle: { select: { id: true, name: true } }, userAllowed: person, requestedBy: person },
    }),
  ]);
  return {
    bundles: bundles.map((bundle) => ({
      id: bundle.id,
      name: bundle.name,
      createdAt: bundle.createdAt,
      permissions: bundle.permissions.map((permission) => ({
        id: permission.id,
        createdAt: permission.createdAt,
        person: visiblePerson(permission.userAllowed, userId),
      })),
    })),
    allowedInto: allowedInto.map((permission) => ({
      id: permission.id,
      createdAt: permission.createdAt,
      bundle: { id: permission.bundle.id, name: permission.bundle.name },
      owner: visiblePerson(permission.bundle.owner, userId),
    })),
    sent: sent.map((request) => ({
      id: request.id,
      bundle: request.bundle,
      status: statusOf(request, atMs) as RequestStatus,
      createdAt: request.createdAt,
      expiresAt: request.expiresAt,
      redeemedAt: request.redeemedAt,
      endedAt: request.endedAt,
      userTarget: visiblePerson(request.userTarget, userId, permissionRequestContext(request)),
      userAllowed: visiblePerson(request.userAllowed, userId, permissionRequestContext(request)),
    })),
    received: received.map((request) => ({
      id: request.id,
      bundle: request.bundle,
      expiresAt: request.expiresAt,
      requestedBy: visiblePerson(request.requestedBy, userId, permissionRequestContext(request)),
      userAllowed: visiblePerson(request.userAllowed, userId, permissionRequestContext(request)),
    })),
  };
}

export type SharingOverview = Awaited<ReturnType<typeof sharingOverview>>;
