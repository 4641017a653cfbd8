// The reasons a refused web sign-in reports besides a wrong password (docs/rules/accounts.md#limits,
// docs/rules/accounts.md#password-hashing), shared by the server (src/auth/options.ts, sign-in-status.ts) and
// the sign-in page, whose browser bundle must import nothing of Node.

/** authorize()'s reason when password hashing refused the check (src/users/passwords.ts, HashingBusy). */
export const SIGN_IN_BUSY = "busy";
/** authorize()'s reason when a sign-in limit is reached (src/users/sign-in.ts). */
export const SIGN_IN_RATE_LIMITED = "rate_limited";
