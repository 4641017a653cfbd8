// The input rule for text (docs/rules/endpoints.md#input-text), in one place for every way input is read:
// - Every parameter (query string, form or JSON body, every JSON string value at any depth and every key,
//   HTTP Basic credentials, route path parameters) that holds a C0 control character (U+0000 to U+001F) or
//   U+007F is refused with a 400 naming the field: no parameter of this service needs one, PostgreSQL text
//   cannot hold U+0000 at all (SQLSTATE 22021), and refused where input is read they never reach a lookup
//   shared with other requests, a log line, a page or a mail. Callers of readBody() (src/http/body.ts),
//   param() (src/http/route.ts), parseBasic() (src/oauth/client-auth.ts), pageRequest()
//   (src/http/collection.ts) and the authorization endpoint apply it through controlCharacterField().
// - Names a person reads (a client's name, a user's name, a bundle's name) also refuse Unicode format
//   characters (category Cf: the bidi embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069, the
//   zero-width characters U+200B-U+200F, U+FEFF, ...), line breaks (U+0085, U+2028, U+2029 besides the C0
//   ones) and lone surrogates, so that a name cannot pass itself off as another ("Goo\u202egle" shows as
//   "Gooelg") or break the line it is shown on. Every schema of such a name is readableName().
import { z } from "zod";

const CONTROL = /[\u0000-\u001f\u007f]/;

/** Whether `text` holds a C0 control character or DEL. */
export const hasControlCharacter = (text: string): boolean => CONTROL.test(text);

/** A field name as it can be shown in an error: its own control characters written as \uXXXX. */
export const printableField = (name: string): string =>
  name.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** The message of a refused field (other than on OAuth endpoints, which answer their error code). */
export const controlCharacterMessage = (field: string): string => `${field}: must not contain control characters`;

/**
 * The name of the first field of `value` that holds a control character, in a string value or in a key, at
 * any depth ("a.b.0"); null when there is none. `value` is a parsed body (an object), a query
 * string (URLSearchParams), or a string (named `name`). Walked with a stack of its own: a deeply
 * nested body cannot exhaust the call stack.
 */
export function controlCharacterField(value: unknown, name = ""): string | null {
  const stack: Array<[path: string, value: unknown]> = [[name, value]];
  while (stack.length > 0) {
    const [path, item] = stack.pop()!;
    if (typeof item === "string") {
      if (hasControlCharacter(item)) return printableField(path) || "body";
      continue;
    }
    if (item === null || typeof item !== "object") continue;
    const entries = item instanceof URLSearchParams ? [...item] : Array.isArray(item) ? item.map((v, i) => [String(i), v] as const) : Object.entries(item);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const childPath = path ? `${path}.${key}` : key;
      if (hasControlCharacter(key)) return printableField(childPath);
      stack.push([childPath, child]);
    }
  }
  return null;
}

/** Control characters, DEL, line breaks, format characters (Cf) and lone surrogates (Cs). */
const UNREADABLE = /[\u0000-\u001f\u007f\u0085\u2028\u2029\p{Cf}\p{Cs}]/u;

/** Whether a name a person reads may hold `text` (see the rule above). */
export const isReadableName = (text: string): boolean => !UNREADABLE.test(text);

export const UNREADABLE_NAME_MESSAGE = "must not contain control, format (such as bidi) or line-break characters";

/**
 * The schema of every name a person reads (client_name at registration, a client's name from the CLI and the
 * settings page, a user's name, a bundle's name): a string of 1 to `max` characters once trimmed, refused
 * when it holds a character of the rule above (checked before the trim, so that none is trimmed away).
 */
export function readableName(max: number) {
  return z
    .string({ error: "must be a string" })
    .refine(isReadableName, UNREADABLE_NAME_MESSAGE)
    .trim()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`);
}
