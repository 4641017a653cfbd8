// One server instance in its own process, for tests of what must hold across instances and of what a server
// prints (src/testing/instance.ts starts it). It serves every route through the app's dispatcher on a real
// socket, and starts what Next's instrumentation hook starts in each instance (the outbox sweep). It prints
// `listening <url>` on its first line; everything after that is the server's own output.
import { startServer } from "@/testing/app";

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
