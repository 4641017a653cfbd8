"use server";

import { signUp as signUpAccount } from "@/accounts/sign-up";
import { ApiError } from "@/http/errors";
import { actionClientAddress } from "@/http/action-address";

export type SignUpState = { ok: boolean; error: string | null; email: string; name: string };

const RATE_LIMITED = "Too many sign-ups from your network. Try again in an hour.";

/** The same answer for a new address and one that has an account (CONTRACT.md 14): see src/accounts/sign-up.ts. */
export async function signUp(_previous: SignUpState, form: FormData): Promise<SignUpState> {
  const email = String(form.get("email") ?? "");
  const name = String(form.get("name") ?? "");
  try {
    const result = await signUpAccount({ email, name: name || undefined, password: String(form.get("password") ?? ""), ip: await actionClientAddress() });
    return { ok: true, error: null, email: result.email, name };
  } catch (error) {
    if (error instanceof ApiError && error.status === 429) return { ok: false, error: RATE_LIMITED, email, name };
    if (error instanceof ApiError && error.status < 500) {
      const message = error.error.replace(/^(\w+): /, (_m, field: string) => `${field[0]!.toUpperCase()}${field.slice(1)} `);
      return { ok: false, error: message, email, name };
    }
    throw error;
  }
}
