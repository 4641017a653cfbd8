// One server instance in its own process, for tests of what must hold across instances and of what a server
// prints (src/testing/instance.ts starts it). It serves every route through the app's dispatcher on a real
// socket, and starts what Next's instrumentation hook starts in each instance (the outbox sweep). It prints
// `listening <url>` on its first line; everything after that is the server's own output.
//
// With `--seed <demo file>` it first migrates its database and seeds it as `npm run dev` seeds an empty one,
// writing the demo credentials to that file (for a database of its own: DATABASE_URL in its environment).
import { startServer } from "@/testing/app";

const seedAt = process.argv.indexOf("--seed");
if (seedAt !== -1) {
  const demoFile = process.argv[seedAt + 1];
  if (!demoFile) throw new Error("--seed needs the demo file to write");
  const { env } = await import("@/env");
  const { migrate } = await import("@/db/migrate");
  await migrate(env());
  const { seedIfEmpty } = await import("@/cli/seed");
  if (!(await seedIfEmpty(demoFile))) throw new Error(`--seed: the database ${env().databaseUrl} is not empty`);
}

const server = await startServer();
process.stdout.write(`listening ${server.url}\n`);
if (process.argv.includes("--instrumentation")) {
  const { register } = await import("../../instrumentation");
  await register();
}
const stop = () => {
  void server.close().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
