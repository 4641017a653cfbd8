import type { Bundle, User } from "@/generated/sqlite/client";
import { representUser } from "@/users/represent";

export const bundleUri = (id: number) => `/api/bundle/${id}/`;

export function representBundle(bundle: Bundle & { owner: User }, viewerId: number | null) {
  return {
    id: bundle.id,
    resource_uri: bundleUri(bundle.id),
    name: bundle.name,
    owner: representUser(bundle.owner, viewerId),
    created_at: bundle.createdAt.toISOString(),
  };
}
