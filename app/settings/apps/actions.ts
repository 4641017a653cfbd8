"use server";

import { revalidatePath } from "next/cache";
import { disconnectApp } from "@/grants/connected-apps";
import { requireUser } from "../require-user";

export async function disconnect(form: FormData): Promise<void> {
  const user = await requireUser("/settings/apps");
  await disconnectApp({ userId: user.id, clientId: String(form.get("client_id") ?? "") });
  revalidatePath("/settings/apps");
}
