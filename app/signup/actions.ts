"use server";

import { signUp as signUpAccount } from "@/accounts/sign-up";
import { ApiError, ServiceBusy } from "@/http/errors";
import { actionClientAddress } from "@/http/action-address";

/** `field` names the input the error is about, so that the form shows it there (null: about no one field). */
export type SignUpState = { ok: boolean; error: string | null; field: SignUpField | null; email: string; name: string };
export type SignUpField = "name" | "email" | "password";

const FIELDS: readonly SignUpField[] = ["name", "email", "password"];

const RATE_LIMITED = "Too many sign-ups from your network. Try again in an hour.";
/** Password hashing refused the work (503, src/users/passwords.ts): nothing was created. */
const BUSY = "Too many sign-ups right now. Try again in a moment.";

/**
 * The same answer for a new address and one that has an account
 * (docs/rules/accounts.md#sign-up-and-confirmation): see src/accounts/sign-up.ts.
 */
export async function signUp(_previous: SignUpState, form: FormData): Promise<SignUpState> {
  const email = String(form.get("email") ?? "");
  const name = String(form.get("name") ?? "");
  try {
    const result = await signUpAccount({ email, name: name.trim() || undefined, password: String(form.get("password") ?? ""), ip: await actionClientAddress() });
    return { ok: true, error: null, field: null, email: result.email, name };
  } catch (error) {
    if (error instanceof ApiError && error.status === 429) return { ok: false, error: RATE_LIMITED, field: null, email, name };
    if (error instanceof ServiceBusy) return { ok: false, error: BUSY, field: null, email, name };
    if (error instanceof ApiError && error.status < 500) {
      // "password: must be at least 8 characters" -> "Password must be at least 8 characters.", at the password.
      const [, prefix, rest] = /^(\w+): (.*)$/.exec(error.error) ?? [];
      const field = FIELDS.find((name) => name === prefix) ?? null;
      const message = field && rest ? `${field[0]!.toUpperCase()}${field.slice(1)} ${rest}.` : error.error;
      return { ok: false, error: message, field, email, name };
    }
    throw error;
  }
}
