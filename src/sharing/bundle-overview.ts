// What the page of one bundle shows, /bundles/<id> (docs/rules/pages.md#bundle-page): the bundle, its owner, who
// may read it and the permission requests about it. Only who may read the bundle sees it
// (docs/rules/permission-requests.md#bundles, src/bundles/access.ts: the owner and the users allowed in);
// anyone else gets null, the same for a bundle that does not exist, as `GET /api/bundle/<id>/` answers 404 to
// both. Within the page every list follows the API's own visibility: the owner sees every bundle permission,
// an allowed user only their own (as `GET /api/bundle_permission/`); requests are those whose requester, target
// or allowed user the viewer is (as `GET /api/bundle_permission_request/`), whatever their status; people are
// shown under docs/rules/permission-requests.md#who-sees-an-e-mail-address (src/users/email-visibility.ts).
import { nowMs } from "@/clock";
import { db } from "@/db/client";
import { visibleBundles } from "@/bundles/access";
import { requestParties, statusOf, type RequestStatus } from "@/permission-requests/represent";
import { permissionRequestContext, visiblePerson } from "@/users/email-visibility";

/** Requests shown on the page, newest first. */
const REQUESTS_SHOWN = 50;

export async function bundleOverview(viewerId: number, bundleId: number) {
  const client = await db();
  const person = { select: { id: true, name: true, email: true } } as const;
  const bundle = await client.bundle.findFirst({ where: { AND: [{ id: bundleId }, visibleBundles(viewerId)] }, include: { owner: person } });
  if (!bundle) return null;
  const isOwner = bundle.ownerId === viewerId;
  const atMs = nowMs();
  const [permissions, requests] = await Promise.all([
    client.bundlePermission.findMany({
      where: { bundleId, ...(isOwner ? {} : { userAllowedId: viewerId }) },
      orderBy: { id: "asc" },
      include: { userAllowed: person },
    }),
    client.permissionRequest.findMany({
      where: { bundleId, ...requestParties(viewerId) },
      orderBy: { id: "desc" },
      take: REQUESTS_SHOWN,
      include: { userAllowed: person, userTarget: person, requestedBy: person },
    }),
  ]);
  return {
    id: bundle.id,
    name: bundle.name,
    createdAt: bundle.createdAt,
    isOwner,
    owner: visiblePerson(bundle.owner, viewerId),
    permissions: permissions.map((permission) => ({ id: permission.id, createdAt: permission.createdAt, person: visiblePerson(permission.userAllowed, viewerId) })),
    requests: requests.map((request) => {
      const context = permissionRequestContext(request);
      return {
        id: request.id,
        status: statusOf(request, atMs) as RequestStatus,
        createdAt: request.createdAt,
        expiresAt: request.expiresAt,
        redeemedAt: request.redeemedAt,
        endedAt: request.endedAt,
        requestedBy: visiblePerson(request.requestedBy, viewerId, context),
        userTarget: visiblePerson(request.userTarget, viewerId, context),
        userAllowed: visiblePerson(request.userAllowed, viewerId, context),
      };
    }),
  };
}

export type BundleOverview = NonNullable<Awaited<ReturnType<typeof bundleOverview>>>;
