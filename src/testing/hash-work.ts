// Counts the password hash computations a piece of work starts, without timing anything (equal hash work for
// unknown e-mails: docs/rules/accounts.md#password-hashing). @node-rs/argon2 runs every hash and every
// verification as one task on libuv's thread pool, and Node reports each such task to async_hooks when it is
// created, synchronously, from inside the call that started it. The hook looks at who made the call: a task
// whose nearest caller in src/users/passwords.ts, among its exported functions, is verifyPassword() or
// hashPassword() is one verification or one hash (the call to argon2 itself sits in a closure handed to the
// hashing slots, so the exported function is one or two frames further out; the dummy hash of an unknown
// e-mail is a hashPassword() called from verifyPassword(), and counts as a hash). The code under test runs
// unchanged; only Node's own instrumentation is switched on.
import { createHook } from "node:async_hooks";

export type HashWork = { verifications: number; hashes: number };

const PASSWORDS_FILE = /[\\/]src[\\/]users[\\/]passwords\.ts/;

export async function countHashWork<T>(fn: () => Promise<T>): Promise<{ result: T; work: HashWork }> {
  const work: HashWork = { verifications: 0, hashes: 0 };
  const limit = Error.stackTraceLimit;
  const hook = createHook({
    init(_id, type) {
      if (type === "PROMISE") return;
      Error.stackTraceLimit = 20;
      const frames = (new Error().stack ?? "").split("\n");
      Error.stackTraceLimit = limit;
      // The nearest exported function of passwords.ts on the stack is the one that asked for the work.
      const caller = frames.find((frame) => PASSWORDS_FILE.test(frame) && /\b(verifyPassword|hashPassword)\b/.test(frame));
      if (!caller) return;
      if (/\bverifyPassword\b/.test(caller)) work.verifications++;
      else if (/\bhashPassword\b/.test(caller)) work.hashes++;
    },
  });
  hook.enable();
  try {
    const result = await fn();
    return { result, work };
  } finally {
    hook.disable();
  }
}
