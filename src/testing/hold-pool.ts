// Holds libuv's thread pool, where argon2id hashes run (src/users/passwords.ts), so that a test can see who
// is inside the hashing queue at one moment without timing anything. Every pool thread is made to open a
// named pipe (FIFO) for reading, which blocks in the kernel until someone opens it for writing: a real pool
// kept busy by slow file reads, as in production. Hashes started meanwhile are queued behind those reads and
// hold their hashing slots until release(). The code under test runs unchanged.
//
// While the pool is held nothing else on it runs either: no file reads, no dns.lookup (a new PostgreSQL
// connection). warmDatabase() opens the connections a test will need beforehand.
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function holdThreadPool(threads: number): Promise<{ release: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "hold-pool-"));
  const fifos = Array.from({ length: threads }, (_, i) => join(dir, `fifo-${i}`));
  for (const fifo of fifos) execFileSync("mkfifo", [fifo]);
  // Each read occupies one pool thread in open() until its pipe gets a writer.
  const reads = fifos.map((fifo) => readFile(fifo));
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      for (const fifo of fifos) {
        // A reader blocked in open() counts as a reader, so a non-blocking open for writing succeeds once the
        // read has reached its thread (ENXIO before that: try again shortly).
        for (let attempt = 0; ; attempt++) {
          try {
            closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
            break;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENXIO" || attempt > 2000) throw error;
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        }
      }
      await Promise.all(reads);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The size of the PostgreSQL connection pool (src/db/client.ts). */
const PG_POOL_SIZE = 10;

/** Opens every connection of the PostgreSQL pool at once, so that none is opened while the pool is held. */
export async function warmDatabase(connections = PG_POOL_SIZE): Promise<void> {
  const { db, driver } = await import("@/db/client");
  const client = await db();
  if ((await driver()).kind !== "postgresql") return;
  await Promise.all(Array.from({ length: connections }, () => client.$queryRawUnsafe("SELECT 1 AS one FROM pg_sleep(0.05)")));
}
