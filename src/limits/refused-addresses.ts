// Client addresses whose web sign-ins the per-address limit refuses now (docs/rules/accounts.md#limits),
// remembered in this process so that the server answers their next sign-ins before Next does
// (src/server/front.ts). A refused sign-in still costs Next's whole request handling (routing, next-auth's
// CSRF check, the limiter's statement): a flood from one address, answered 429 each time, kept the process's
// one thread busy and held a legitimate password grant back by hundreds of milliseconds. Only what the
// database already refused is remembered: the per-address key was full when a sign-in was refused, until its
// oldest counted failure leaves the window (the same Retry-After), so the early answer is the one the limiter
// would give. Another instance learns of it by its own first refusal. At most MAX_REMEMBERED addresses, the
// oldest dropped first. On globalThis: the custom server and Next's bundle each load this module.

/** Addresses remembered at most. */
const MAX_REMEMBERED = 10_000;

const holder = globalThis as typeof globalThis & { __refusedSignInAddresses?: Map<string, number> };
const refused = (holder.__refusedSignInAddresses ??= new Map<string, number>());

/** Remembers that sign-ins from `address` (an addressKey()) are refused until `untilMs`. */
export function rememberRefusedAddress(address: string, untilMs: number): void {
  refused.delete(address);
  if (refused.size >= MAX_REMEMBERED) refused.delete(refused.keys().next().value!);
  refused.set(address, untilMs);
}

/** Until when sign-ins from `address` (an addressKey()) are refused, or null when they are not known to be. */
export function signInsRefusedUntil(address: string, nowMs: number): number | null {
  const until = refused.get(address);
  if (until === undefined) return null;
  if (until > nowMs) return until;
  refused.delete(address);
  return null;
}
