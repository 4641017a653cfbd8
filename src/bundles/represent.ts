import type { BundleRow } from "@/db/collection-sql";
import { representUser } from "@/users/represent";

export const bundleUri = (id: number) => `/api/bundle/${id}/`;

/** A bundle as read with its owner: by src/db/collection-sql.ts, or by Prisma with `include: { owner: true }`. */
export function representBundle(bundle: BundleRow, viewerId: number | null) {
  return {
    id: bundle.id,
    resource_uri: bundleUri(bundle.id),
    name: bundle.name,
    owner: representUser(bundle.owner, viewerId),
    created_at: bundle.createdAt.toISOString(),
  };
}
