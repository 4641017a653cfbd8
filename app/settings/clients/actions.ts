"use server";

import { revalidatePath } from "next/cache";
import { createClient } from "@/clients/create-client";
import { deleteOwnClient, rotateClientSecret } from "@/clients/manage-clients";
import type { GrantType } from "@/clients/represent";
import { ApiError } from "@/http/errors";
import type { FormResult } from "../../components/forms";
import type { Outcome } from "../../components/status";
import { inActionContext } from "../action-context";
import { formFailure } from "../form-errors";
import { tryIt, type TryIt } from "./try-it";
import { lineMessage, submitClientEdit, typedUris, type EditResult } from "./client-edit";
import { requireUser } from "../require-user";

export type RegisterResult = FormResult & { client?: { clientId: string; clientSecret: string | null; name: string; signsJwt: boolean; tryIt: TryIt } };

const GRANT_WORDS: Record<string, string> = {
  authorization_code: "an authorization code",
  implicit: "an implicit",
  password: "a password",
  client_credentials: "a client credentials",
  device_code: "a device",
};

export async function registerClient(form: FormData): Promise<RegisterResult> {
  const user = await requireUser("/settings/clients");
  const typed = typedUris(String(form.get("redirect_uris") ?? ""));
  const grantType = String(form.get("grant_type") ?? "");
  const uris = typed.map((entry) => entry.uri);
  const postLogoutRedirectUris = typedUris(String(form.get("post_logout_redirect_uris") ?? "")).map((entry) => entry.uri);
  const backchannelLogoutUri = String(form.get("backchannel_logout_uri") ?? "").trim() || null;
  const jwksText = String(form.get("jwks") ?? "").trim();
  let jwks: unknown;
  if (jwksText) {
    try {
      jwks = JSON.parse(jwksText);
    } catch {
      const message = 'Paste a JWK Set as JSON: {"keys": [...]}.';
      return { ok: false, message, fieldErrors: { jwks: message } };
    }
  }
  try {
    const client = await createClient({
      ownerId: user.id,
      name: String(form.get("name") ?? ""),
      grantType: grantType as GrantType,
      redirectUris: uris,
      isPublic: form.get("public") === "on",
      postLogoutRedirectUris,
      backchannelLogoutUri,
      ...(jwks === undefined ? {} : { jwks }),
    });
    revalidatePath("/settings/clients");
    return { ok: true, message: `Registered ${client.name}.`, client: { clientId: client.client_id, clientSecret: client.client_secret, name: client.name, signsJwt: jwks !== undefined, tryIt: tryIt(client) } };
  } catch (error) {
    const fields = { name: "name", grantType: "grant_type", redirect_uris: "redirect_uris", public: "public", post_logout_redirect_uris: "post_logout_redirect_uris", backchannel_logout_uri: "backchannel_logout_uri", jwks: "jwks" };
    return formFailure(error, fields, (field, message, apiError) => {
      const kind = GRANT_WORDS[grantType] ?? "this";
      if (field === "redirect_uris") {
        // "redirect_uris.2: must use https": the third distinct URI; say which line it is on.
        const index = /^redirect_uris\.(\d+):/.exec(apiError.error)?.[1];
        if (index !== undefined) return lineMessage(typed, index, message);
        if (/needs at least one/.test(message)) return `Add at least one redirect URI: ${kind} client sends people back to it after they approve.`;
        if (/has no redirect URIs/.test(message)) return `Leave this empty: ${kind} client never sends people back to a redirect URI.`;
      }
      if (field === "public") return `${kind.charAt(0).toUpperCase()}${kind.slice(1)} client acts for you and must keep a secret: it cannot be public.`;
      if (field === "name" && /empty/.test(message)) return "Give the client a name.";
      return null;
    });
  }
}

export type RotateResult = { ok: boolean; message: string; clientSecret: string | null };

export async function rotateSecret(form: FormData): Promise<RotateResult> {
  const user = await requireUser("/settings/clients");
  const clientId = String(form.get("client_id") ?? "");
  try {
    const secret = await inActionContext(() => rotateClientSecret({ ownerId: user.id, clientId }));
    return { ok: true, message: "New secret issued: the old one no longer works. Copy the new one now: it will not be shown again.", clientSecret: secret };
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) return { ok: false, message: error.status === 404 ? "This client no longer exists." : "A public client has no secret.", clientSecret: null };
    throw error;
  }
}

export async function removeClient(form: FormData): Promise<Outcome> {
  const user = await requireUser("/settings/clients");
  const name = String(form.get("name") ?? "the client");
  try {
    await inActionContext(() => deleteOwnClient({ ownerId: user.id, clientId: String(form.get("client_id") ?? "") }));
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    revalidatePath("/settings/clients");
    return { ok: true, message: `${name} was already deleted.` };
  }
  revalidatePath("/settings/clients");
  return { ok: true, message: `Deleted ${name}. Every connection and token it had has ended.` };
}

export async function editClient(form: FormData): Promise<EditResult> {
  const user = await requireUser("/settings/clients");
  const result = await inActionContext(() => submitClientEdit(user.id, form));
  if (result.ok) revalidatePath("/settings/clients");
  return result;
}
