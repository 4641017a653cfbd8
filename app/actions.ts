"use server";

import { redirect } from "next/navigation";
import { currentUser } from "@/auth/session";
import { signOutEverywhere } from "@/users/sign-out-everywhere";
import { logoutsQueued } from "@/browser-sessions/logout-queued";

export async function signOutAllSessions(): Promise<void> {
  const user = await currentUser();
  if (user) logoutsQueued(await signOutEverywhere(user.id));
  redirect("/login");
}
