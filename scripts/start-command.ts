// The production server's command line as package.json's `start` script holds it: `node`, its flags
// (docs/design.md#memory), `dist/server.js start`. The bench, the fault script and the e2e suite start exactly
// that, without npm in front, so that what they measure and test is what production runs.
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The arguments to give `node` (process.execPath): flags, then dist/server.js and "start". */
export function startArguments(root = process.cwd()): string[] {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
  const [command, ...args] = manifest.scripts.start!.trim().split(/\s+/);
  if (command !== "node" || args.at(-2) !== "dist/server.js" || args.at(-1) !== "start") {
    throw new Error(`package.json's start script must be "node [flags] dist/server.js start", not "${manifest.scripts.start}"`);
  }
  return args;
}
