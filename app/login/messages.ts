// What the sign-in page says for each reason next-auth reports (src/auth/options.ts, src/auth/sign-in-reasons.ts).
import { SIGN_IN_BUSY, SIGN_IN_RATE_LIMITED } from "@/auth/sign-in-reasons";

const MESSAGES: Record<string, string> = {
  CredentialsSignin: "That e-mail and password do not match an account.",
  [SIGN_IN_RATE_LIMITED]: "Too many failed attempts for this e-mail. Wait 15 minutes and try again, or reset your password.",
  [SIGN_IN_BUSY]: "Too many sign-ins right now. Try again in a moment.",
};

/** The sentence for next-auth's `error`; null for none. */
export function signInMessage(error: string | null | undefined): string | null {
  if (!error) return null;
  return Object.hasOwn(MESSAGES, error) ? MESSAGES[error]! : "Sign-in failed. Try again.";
}
