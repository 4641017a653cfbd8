// User codes of the device flow (RFC 8628 6.1, docs/rules/tokens.md#device-flow): 8 letters from
// BCDFGHJKLMNPQRSTVWXZ (no vowels, so no words; no letters that look like digits), about 34.6 bits, shown as
// WDJB-MJHT. Input is accepted in any case, with or without the dash or spaces; wrong guesses are limited per
// user (src/device/verify-user-code.ts), which RFC 8628 5.1 asks for at this entropy.
import { randomInt } from "node:crypto";

export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
export const USER_CODE_LENGTH = 8;
const VALID = new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`);

/** A new random user code, normalised (no dash). */
export function generateUserCode(): string {
  let code = "";
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** WDJBMJHT -> WDJB-MJHT */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** What a person typed, as stored (upper case, no dashes or spaces), or null when it cannot be a user code. */
export function normalizeUserCode(input: string): string | null {
  const code = input.toUpperCase().replace(/[\s\-‐‑–—]/g, "");
  return VALID.test(code) ? code : null;
}
