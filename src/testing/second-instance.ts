// A second server instance for tests that need two processes on one database (e.g. a DPoP jti replayed
// against another instance, docs/rules/tokens.md#dpop): the production fast lane on a free port, with the test
// environment it inherits. Prints "listening <url>" and serves until it is sent SIGTERM.
import { startServer } from "@/testing/app";

const server = await startServer();
process.stdout.write(`listening ${server.url}\n`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
