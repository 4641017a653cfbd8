"use server";

import { revalidatePath } from "next/cache";
import { createClient } from "@/clients/create-client";
import { deleteOwnClient, rotateClientSecret } from "@/clients/manage-clients";
import type { GrantType } from "@/clients/represent";
import { ApiError } from "@/http/errors";
import { requireUser } from "../require-user";

export type SecretState = { error: string | null; clientId: string | null; clientSecret: string | null; name: string | null };

const fail = (error: unknown): SecretState => {
  if (error instanceof ApiError && error.status < 500) return { error: error.error, clientId: null, clientSecret: null, name: null };
  throw error;
};

export async function registerClient(_previous: SecretState, form: FormData): Promise<SecretState> {
  const user = await requireUser("/settings/clients");
  const redirectUris = String(form.get("redirect_uris") ?? "")
    .split(/\s+/)
    .filter(Boolean);
  try {
    const client = await createClient({
      ownerId: user.id,
      name: String(form.get("name") ?? ""),
      grantType: String(form.get("grant_type") ?? "") as GrantType,
      redirectUris,
      isPublic: form.get("public") === "on",
    });
    revalidatePath("/settings/clients");
    return { error: null, clientId: client.client_id, clientSecret: client.client_secret, name: client.name };
  } catch (error) {
    return fail(error);
  }
}

export async function rotateSecret(_previous: SecretState, form: FormData): Promise<SecretState> {
  const user = await requireUser("/settings/clients");
  const clientId = String(form.get("client_id") ?? "");
  try {
    const secret = await rotateClientSecret({ ownerId: user.id, clientId });
    return { error: null, clientId, clientSecret: secret, name: null };
  } catch (error) {
    return fail(error);
  }
}

export async function removeClient(form: FormData): Promise<void> {
  const user = await requireUser("/settings/clients");
  await deleteOwnClient({ ownerId: user.id, clientId: String(form.get("client_id") ?? "") }).catch((error: unknown) => {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  });
  revalidatePath("/settings/clients");
}
