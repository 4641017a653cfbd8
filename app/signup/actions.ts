"use server";

import { ApiError } from "@/http/errors";
import { createUser } from "@/users/create-user";

export type SignUpState = { ok: boolean; error: string | null; email: string; name: string };

export async function signUp(_previous: SignUpState, form: FormData): Promise<SignUpState> {
  const email = String(form.get("email") ?? "");
  const name = String(form.get("name") ?? "");
  try {
    await createUser({ email, name: name || undefined, password: String(form.get("password") ?? "") });
    return { ok: true, error: null, email, name };
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) {
      const message = error.status === 409 ? "An account with this e-mail already exists. Sign in instead." : error.error.replace(/^(\w+): /, (_m, field: string) => `${field[0]!.toUpperCase()}${field.slice(1)} `);
      return { ok: false, error: message, email, name };
    }
    throw error;
  }
}
