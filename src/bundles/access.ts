// Who may see a bundle (docs/rules/permission-requests.md#bundles): its owner and the users allowed into it.
// Access is read from the BundlePermission rows on every request, so that revoking a permission takes the
// access away at once.
import type { Prisma } from "@/db/client";

export function visibleBundles(userId: number): Prisma.BundleWhereInput {
  return { OR: [{ ownerId: userId }, { permissions: { some: { userAllowedId: userId } } }] };
}
