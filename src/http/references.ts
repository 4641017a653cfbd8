// References to other resources in request bodies (docs/rules/specification.md#permission-request-record): a
// resource URI (the path, as in every `resource_uri`, or the same path as an absolute URL on APP_URL), or the
// bare id as a number or a string of digits. Users may also be named by e-mail (src/users/user-reference.ts).
import { env } from "@/env";

const MAX_ID_DIGITS = 12;
const DIGITS = new RegExp(`^\\d{1,${MAX_ID_DIGITS}}$`);

/** The id a reference names, for resources under `collectionPath` (e.g. "/api/bundle/"); null if malformed. */
export function idFromReference(value: unknown, collectionPath: string): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) && value > 0 ? value : null;
  if (typeof value !== "string") return null;
  const text = value.trim();
  if (DIGITS.test(text)) return positive(Number(text));
  let path: string;
  if (text.startsWith("/") && !text.startsWith("//")) {
    path = text;
  } else if (URL.canParse(text)) {
    const url = new URL(text);
    if (url.origin !== new URL(env().appUrl).origin || url.search || url.hash) return null;
    path = url.pathname;
  } else {
    return null;
  }
  if (!path.startsWith(collectionPath)) return null;
  const rest = path.slice(collectionPath.length).replace(/\/$/, "");
  return DIGITS.test(rest) ? positive(Number(rest)) : null;
}

const positive = (id: number) => (id > 0 ? id : null);
