"use server";

import { revalidatePath } from "next/cache";
import { disconnectApp } from "@/grants/connected-apps";
import type { Outcome } from "../../components/status";
import { inActionContext } from "../action-context";
import { requireUser } from "../require-user";

export async function disconnect(form: FormData): Promise<Outcome> {
  const user = await requireUser("/settings/apps");
  const name = String(form.get("name") ?? "The app");
  const result = await inActionContext(() => disconnectApp({ userId: user.id, clientId: String(form.get("client_id") ?? "") }));
  revalidatePath("/settings/apps");
  if (!result.found || (!result.consentForgotten && result.grantsRevoked === 0)) return { ok: true, message: `${name} was already disconnected.` };
  const tokens = result.tokensRevoked === 1 ? "1 token was revoked" : `${result.tokensRevoked} tokens were revoked`;
  return { ok: true, message: `Disconnected ${name}: it can no longer use your account (${tokens}), and it will have to ask you again.` };
}
