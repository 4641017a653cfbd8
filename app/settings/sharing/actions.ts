"use server";

import { revalidatePath } from "next/cache";
import { deleteBundlePermission } from "@/bundle-permissions/delete-bundle-permission";
import { ApiError } from "@/http/errors";
import { deletePermissionRequest } from "@/permission-requests/delete-permission-request";
import { requireUser } from "../require-user";

const ignoreGone = (error: unknown) => {
  // Already revoked or ended (another tab, the other party): the page simply refreshes.
  if (!(error instanceof ApiError && (error.status === 404 || error.status === 409))) throw error;
};

export async function revokeAccess(form: FormData): Promise<void> {
  const user = await requireUser("/settings/sharing");
  await deleteBundlePermission({ id: String(form.get("permission_id") ?? ""), viewerId: user.id }).catch(ignoreGone);
  revalidatePath("/settings/sharing");
}

/** Cancel a request the user sent, or decline one the user received (CONTRACT.md 6: the target's delete declines). */
export async function endRequest(form: FormData): Promise<void> {
  const user = await requireUser("/settings/sharing");
  const id = Number(form.get("request_id"));
  if (Number.isInteger(id) && id > 0) await deletePermissionRequest({ id, viewerId: user.id }).catch(ignoreGone);
  revalidatePath("/settings/sharing");
}
