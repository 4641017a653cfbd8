"use server";

import { confirmEmail, resendVerification, type Resent, type Verification } from "@/accounts/verify-email";
import { currentUser } from "@/auth/session";

/** The button on /verify-email: a POST (Next checks the Origin of server actions) that uses the token. */
export async function confirmAddress(_previous: Verification | null, form: FormData): Promise<Verification> {
  return confirmEmail(String(form.get("token") ?? ""));
}

/** "Send the link again", for a signed-in user whose address is not confirmed. */
export async function resendConfirmation(_previous: Resent | null): Promise<Resent | null> {
  const user = await currentUser();
  if (!user) return null;
  return resendVerification(user.id);
}
