// The edit form of /settings/clients (docs/rules/pages.md#editing-a-client): the typed fields turned into
// updateOwnClient()'s input (src/clients/update-client.ts), and its refusals into messages at the field they
// concern, in the words of the registration form. Kept apart from the server action so that a test can submit
// the form as the page does.
import { updateOwnClient } from "@/clients/update-client";
import { ApiError } from "@/http/errors";
import type { FormResult } from "../../components/forms";
import { formFailure } from "../form-errors";

export type EditResult = FormResult & { client?: { clientId: string; name: string } };

/** The URIs as typed, one per line (blank lines ignored), with the line each came from. */
export function typedUris(text: string): { uri: string; line: number }[] {
  return text
    .split(/\r?\n/)
    .map((raw, index) => ({ uri: raw.trim(), line: index + 1 }))
    .filter((entry) => entry.uri);
}

/** "redirect_uris.2: must use https" names the third distinct URI: say which line it is on. */
export function lineMessage(typed: { uri: string; line: number }[], index: string, message: string): string {
  const uri = [...new Set(typed.map((entry) => entry.uri))][Number(index)] ?? "";
  const line = typed.find((entry) => entry.uri === uri)?.line;
  return `Line ${line ?? Number(index) + 1} (${uri.length > 80 ? `${uri.slice(0, 80)}…` : uri}) ${message}.`;
}

const FIELDS = {
  name: "name",
  redirect_uris: "redirect_uris",
  post_logout_redirect_uris: "post_logout_redirect_uris",
  backchannel_logout_uri: "backchannel_logout_uri",
  logo_uri: "logo_uri",
};

/** Submits the edit form of one client as `ownerId`. */
export async function submitClientEdit(ownerId: number, form: FormData): Promise<EditResult> {
  const text = (name: string) => String(form.get(name) ?? "");
  const clientId = text("client_id");
  const redirect = typedUris(text("redirect_uris"));
  const postLogout = typedUris(text("post_logout_redirect_uris"));
  try {
    const client = await updateOwnClient({
      ownerId,
      clientId,
      name: text("name"),
      redirectUris: redirect.map((entry) => entry.uri),
      postLogoutRedirectUris: postLogout.map((entry) => entry.uri),
      backchannelLogoutUri: text("backchannel_logout_uri").trim() || null,
      logoUri: text("logo_uri").trim() || null,
    });
    return { ok: true, message: `Saved ${client.name}. Its client_id, secret and every connection people gave it are unchanged.`, client: { clientId: client.client_id, name: client.name } };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return { ok: false, message: "This client no longer exists." };
    return formFailure(error, FIELDS, (field, message, apiError) => {
      const index = /^[a-z_]+\.(\d+):/.exec(apiError.error)?.[1];
      if (index !== undefined && field === "redirect_uris") return lineMessage(redirect, index, message);
      if (index !== undefined && field === "post_logout_redirect_uris") return lineMessage(postLogout, index, message);
      if (field === "redirect_uris" && /needs at least one/.test(message)) return "Keep at least one redirect URI: this client sends people back to it after they approve.";
      if (field === "redirect_uris" && /has no redirect URIs/.test(message)) return "Leave this empty: this client never sends people back to a redirect URI.";
      if (field === "name" && /empty/.test(message)) return "Give the client a name.";
      return null;
    });
  }
}
