"use server";

import { resetPassword, type PasswordReset } from "@/accounts/reset-password";
import { ApiError } from "@/http/errors";

export type ResetState = { result: PasswordReset | null; error: string | null };

/** The form's POST (Next checks a server action's Origin): the only thing that uses the mailed token. */
export async function chooseNewPassword(_previous: ResetState, form: FormData): Promise<ResetState> {
  try {
    return { result: await resetPassword({ token: String(form.get("token") ?? ""), password: String(form.get("password") ?? "") }), error: null };
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return { result: null, error: "Choose a password of at least 8 characters (at most 256)." };
    throw error;
  }
}
