"use server";

import { resetPassword, type PasswordReset } from "@/accounts/reset-password";
import { ApiError, ServiceBusy } from "@/http/errors";

export type ResetState = { result: PasswordReset | null; error: string | null };

/** The form's POST (Next checks a server action's Origin): the only thing that uses the mailed token. */
export async function chooseNewPassword(_previous: ResetState, form: FormData): Promise<ResetState> {
  try {
    return { result: await resetPassword({ token: String(form.get("token") ?? ""), password: String(form.get("password") ?? "") }), error: null };
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return { result: null, error: "Choose a password of at least 8 characters (at most 256)." };
    // Password hashing refused the work (src/users/passwords.ts): the link is not used up.
    if (error instanceof ServiceBusy) return { result: null, error: "Too many requests right now. Try again in a moment; your link still works." };
    throw error;
  }
}
