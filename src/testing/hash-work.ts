// Counts the password hash computations a piece of work starts, without timing anything (issue 15: "equal
// hash work for unknown e-mails"). @node-rs/argon2 runs every hash and every verification as one task on
// libuv's thread pool, and Node reports each such task to async_hooks when it is created, synchronously, from
// inside the call that started it. The hook looks at who made the call: a task created from the
// verifyPassword() or hashPassword() frame of src/users/passwords.ts is one verification or one hash. The
// code under test runs unchanged; only Node's own instrumentation is switched on.
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
      // The first frame in passwords.ts is the function that called argon2.
      const caller = frames.find((frame) => PASSWORDS_FILE.test(frame));
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
