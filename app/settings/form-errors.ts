// Errors of the domain functions (ApiError "<field>: <message>", docs/rules/endpoints.md#error-bodies), turned
// into what a form shows: a message at the field it concerns, in words, or a message for the whole form.
import { ApiError } from "@/http/errors";
import type { FormResult } from "../components/forms";

/** "must not be empty" -> "Must not be empty." */
export const sentence = (text: string) => {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};

/**
 * The form answer for an ApiError under 500: the API field named in the message is mapped to a form field
 * (`fields`), its message rewritten by `words` when given; other errors are the form's. Anything else is
 * thrown on (a server error stays a server error).
 */
export function formFailure(
  error: unknown,
  fields: Record<string, string>,
  words: (field: string, message: string, error: ApiError) => string | null = () => null,
): FormResult {
  if (!(error instanceof ApiError) || error.status >= 500) throw error;
  if (error.status === 429) return { ok: false, message: "You have done this too often in the last hour. Try again later." };
  const match = /^([a-z_]+)(?:\.\d+)?: (.*)$/s.exec(error.error);
  const apiField = match?.[1] ?? "";
  const message = match?.[2] ?? error.error;
  const worded = words(apiField, message, error) ?? sentence(message);
  const field = fields[apiField];
  return field ? { ok: false, message: worded, fieldErrors: { [field]: worded } } : { ok: false, message: worded };
}
