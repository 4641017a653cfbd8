// Counts the password hash computations a piece of work starts, without timing anything (equal hash work for
// unknown e-mails: docs/rules/accounts.md#password-hashing). Every hash and every verification is one job
// handed to the hashing threads (src/users/hashing-threads.ts), which tell hashingThreadHooks.onJob of each:
// a "verify" job is one verification, a "hash" job one hash (the dummy hash of an unknown e-mail, made once,
// counts as a hash). The code under test runs unchanged.
import { hashingThreadHooks } from "@/users/hashing-threads";

export type HashWork = { verifications: number; hashes: number };

export async function countHashWork<T>(fn: () => Promise<T>): Promise<{ result: T; work: HashWork }> {
  const work: HashWork = { verifications: 0, hashes: 0 };
  const previous = hashingThreadHooks.onJob;
  hashingThreadHooks.onJob = (job) => {
    if (job.op === "verify") work.verifications++;
    else work.hashes++;
  };
  try {
    const result = await fn();
    return { result, work };
  } finally {
    hashingThreadHooks.onJob = previous;
  }
}
