"use server";

import { requestPasswordReset } from "@/accounts/request-password-reset";
import { actionClientAddress } from "@/http/action-address";
import { ApiError } from "@/http/errors";

export type ForgotState = { sent: boolean; email: string; error: string | null };

/** The same answer for every address (src/accounts/request-password-reset.ts). */
export async function askForResetLink(_previous: ForgotState, form: FormData): Promise<ForgotState> {
  const email = String(form.get("email") ?? "");
  try {
    const result = await requestPasswordReset({ email, ip: await actionClientAddress() });
    return { sent: true, email: result.email, error: null };
  } catch (error) {
    if (error instanceof ApiError && error.status === 429) {
      return { sent: false, email, error: "Too many reset requests for this address or from your network. Try again in an hour." };
    }
    if (error instanceof ApiError && error.status === 400) return { sent: false, email, error: "Enter an e-mail address, like name@example.com." };
    throw error;
  }
}
