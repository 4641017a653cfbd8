"use server";

// The sharing page's forms and buttons (docs/rules/pages.md#sharing). Each goes through the same domain
// function as the API (src/bundles, src/bundle-permissions, src/permission-requests), so every rule holds here
// too: limits, the one 400 that reveals nothing about ownership, the e-mail visibility rule, unconfirmed
// targets.
import { revalidatePath } from "next/cache";
import { createBundle } from "@/bundles/create-bundle";
import { deleteBundle } from "@/bundles/delete-bundle";
import { ALREADY_ALLOWED, createBundlePermission } from "@/bundle-permissions/create-bundle-permission";
import { deleteBundlePermission } from "@/bundle-permissions/delete-bundle-permission";
import type { Principal } from "@/resource/authenticate";
import { ApiError } from "@/http/errors";
import { ALREADY_PENDING, CANNOT_GRANT, createPermissionRequest } from "@/permission-requests/create-permission-request";
import { deletePermissionRequest } from "@/permission-requests/delete-permission-request";
import { acceptPermissionRequest } from "@/permission-requests/use-token";
import { personLabel } from "@/users/email-visibility";
import type { FormResult } from "../../components/forms";
import type { Outcome } from "../../components/status";
import { inActionContext } from "../action-context";
import { formFailure } from "../form-errors";
import { requireUser } from "../require-user";

const PAGE = "/settings/sharing";

/** The sharing page, and every bundle page (/bundles/<id>), which show the same permissions and requests. */
function revalidateSharing() {
  revalidatePath(PAGE);
  revalidatePath("/bundles/[id]", "page");
}
const text = (form: FormData, name: string) => String(form.get(name) ?? "");
const quoted = (name: string) => `“${name}”`;

const NO_SUCH_USER = "No account uses this e-mail address.";

export async function createBundleAction(form: FormData): Promise<FormResult> {
  const user = await requireUser(PAGE);
  try {
    const bundle = await createBundle({ ownerId: user.id, name: text(form, "name") });
    revalidateSharing();
    return { ok: true, message: `Created ${quoted(bundle.name)} (bundle id ${bundle.id}). Give the id to people who want to ask you for access.` };
  } catch (error) {
    return formFailure(error, { name: "name" }, (_field, message) => (/empty/.test(message) ? "Give the bundle a name." : null));
  }
}

export async function letInAction(form: FormData): Promise<FormResult> {
  const user = await requireUser(PAGE);
  const email = text(form, "user_allowed").trim();
  try {
    const permission = await createBundlePermission({ ownerId: user.id, body: { bundle: text(form, "bundle"), user_allowed: email } });
    revalidateSharing();
    return { ok: true, message: `${email} can now read ${quoted(permission.bundle.name)}.` };
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return { ok: false, message: "Only the bundle's owner can let people in.", fieldErrors: { bundle: "Only the bundle's owner can let people in." } };
    return formFailure(error, { bundle: "bundle", user_allowed: "user_allowed" }, (field, message, apiError) => {
      if (field === "bundle") return /no such/.test(message) ? "This bundle no longer exists." : "Choose one of your bundles.";
      if (apiError.error === ALREADY_ALLOWED) return email.toLowerCase() === user.email ? "That is you: you own this bundle." : "This person can already read this bundle.";
      if (/no such user/.test(message)) return NO_SUCH_USER;
      if (field === "user_allowed") return "Enter the person's e-mail address.";
      return null;
    });
  }
}

/** The page acts as the signed-in person, as the API does for a session (src/resource/authenticate.ts). */
const sessionPrincipal = (user: { id: number; name: string; email: string }): Principal => ({
  userId: user.id,
  scopes: ["readonly", "readwrite"],
  clientId: null,
  via: "session",
  user: { id: user.id, name: user.name, email: user.email },
  firstParty: true,
});

export async function askOwnerAction(form: FormData): Promise<FormResult> {
  const user = await requireUser(PAGE);
  const principal = sessionPrincipal(user);
  const owner = text(form, "user_target").trim();
  try {
    const request = await inActionContext(() =>
      createPermissionRequest({ principal, body: { user_target: owner, bundle: text(form, "bundle"), user_allowed: text(form, "user_allowed").trim() } }),
    );
    revalidateSharing();
    return { ok: true, message: `Request sent: ${owner} gets an e-mail with a link to accept it for ${quoted(request.bundle.name)}. It works until the owner answers, or for 7 days.` };
  } catch (error) {
    if (error instanceof ApiError && error.error === ALREADY_PENDING) return { ok: false, message: "A request for this person and bundle is already waiting for the owner's answer." };
    if (error instanceof ApiError && error.status === 429) return { ok: false, message: "You have sent too many requests in the last hour. Try again later." };
    return formFailure(error, { user_target: "user_target", bundle: "bundle", user_allowed: "user_allowed" }, (field, message, apiError) => {
      if (apiError.error === CANNOT_GRANT) {
        return "This person cannot let anyone into this bundle. Check the owner's e-mail and the bundle id: the owner must own the bundle and have confirmed their e-mail address.";
      }
      if (field === "bundle") return /no such/.test(message) ? "No bundle has this id." : "Enter the bundle's id (a number, like 12) or its link (like /api/bundle/12/).";
      if (field === "user_allowed" && /already has access/.test(message)) return "This person can already read this bundle.";
      if (/no such user/.test(message)) return NO_SUCH_USER;
      if (field === "user_target" || field === "user_allowed") return "Enter an e-mail address.";
      return null;
    });
  }
}

/** Gone already (another tab, the other party): say so, and show the page as it is now. */
function alreadyDone(error: unknown, message: string): Outcome {
  if (error instanceof ApiError && (error.status === 404 || error.status === 409)) return { ok: true, message };
  throw error;
}

/** The owner takes access back; or the allowed user gives it up. */
export async function revokeAccess(form: FormData): Promise<Outcome> {
  const user = await requireUser(PAGE);
  const bundle = quoted(text(form, "bundle_name"));
  const giveUp = text(form, "mode") === "give_up";
  try {
    await deleteBundlePermission({ id: text(form, "permission_id"), viewerId: user.id });
  } catch (error) {
    return alreadyDone(error, `This access to ${bundle} had already ended.`);
  } finally {
    revalidateSharing();
  }
  return { ok: true, message: giveUp ? `You gave up your access to ${bundle}.` : `${text(form, "person")} can no longer read ${bundle}.` };
}

export async function deleteBundleAction(form: FormData): Promise<Outcome> {
  const user = await requireUser(PAGE);
  const bundle = quoted(text(form, "bundle_name"));
  try {
    await deleteBundle({ id: text(form, "bundle_id"), viewerId: user.id });
  } catch (error) {
    return alreadyDone(error, `${bundle} was already deleted.`);
  } finally {
    revalidateSharing();
  }
  return { ok: true, message: `Deleted ${bundle}. Everyone you had let in lost access to it.` };
}

/**
 * Withdraw a request you sent, or decline one you received (the target's delete declines:
 * docs/rules/permission-requests.md#deleting-and-declining).
 */
export async function endRequest(form: FormData): Promise<Outcome> {
  const user = await requireUser(PAGE);
  const bundle = quoted(text(form, "bundle_name"));
  const declining = text(form, "mode") === "decline";
  const id = Number(text(form, "request_id"));
  try {
    if (!Number.isInteger(id) || id <= 0) throw new ApiError(404, "no such request");
    await deletePermissionRequest({ id, viewerId: user.id });
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) return { ok: false, message: `This request for ${bundle} was already accepted: revoke the access instead.` };
    return alreadyDone(error, `This request for ${bundle} had already ended.`);
  } finally {
    revalidateSharing();
  }
  return { ok: true, message: declining ? `Declined the request for ${bundle}: nobody was given access.` : `Withdrew your request for ${bundle}. Its link no longer works.` };
}

/**
 * The owner accepts a request to them (docs/rules/pages.md#accepting-on-the-sharing-page), through the same
 * redeem as the mailed link's (docs/rules/permission-requests.md#redeeming).
 */
export async function acceptRequest(form: FormData): Promise<Outcome> {
  const user = await requireUser(PAGE);
  const bundle = quoted(text(form, "bundle_name"));
  const id = Number(text(form, "request_id"));
  try {
    if (!Number.isInteger(id) || id <= 0) throw new ApiError(404, "no such request");
    const request = await inActionContext(() => acceptPermissionRequest({ id, principal: sessionPrincipal(user) }));
    const allowed = request.user_allowed;
    // The representation holds the e-mail only where the owner may see it.
    const who = personLabel({ id: allowed.id, name: allowed.name, email: allowed.email ?? null });
    return { ok: true, message: `Accepted: ${who} can now read ${bundle}.` };
  } catch (error) {
    if (error instanceof ApiError && error.status === 410) {
      if (/redeemed/.test(error.error)) return { ok: true, message: `This request for ${bundle} was already accepted.` };
      if (/expired/.test(error.error)) return { ok: false, message: `This request for ${bundle} has expired: nobody was given access.` };
      return { ok: false, message: `This request for ${bundle} had already ended: it was declined or withdrawn.` };
    }
    if (error instanceof ApiError && error.status === 404) return { ok: false, message: `This request for ${bundle} no longer exists: its bundle may have been deleted.` };
    throw error;
  } finally {
    revalidateSharing();
  }
}
