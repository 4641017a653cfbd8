// The production server's command line as package.json's `start` script holds it: the environment it sets
// (docs/design.md#memory), `node`, its flags, `dist/server.js start`. The bench, the fault script and the e2e
// suite start exactly that, without npm in front, so that what they measure and test is what production runs.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ASSIGNMENT = /^([A-Z_][A-Z0-9_]*)=(\S*)$/;

function startCommand(root: string): { env: Record<string, string>; args: string[] } {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
  const words = manifest.scripts.start!.trim().split(/\s+/);
  const env: Record<string, string> = {};
  for (let match; (match = ASSIGNMENT.exec(words[0] ?? "")); words.shift()) env[match[1]!] = match[2]!;
  const [command, ...args] = words;
  if (command !== "node" || args.at(-2) !== "dist/server.js" || args.at(-1) !== "start") {
    throw new Error(`package.json's start script must be "[NAME=value ...] node [flags] dist/server.js start", not "${manifest.scripts.start}"`);
  }
  return { env, args };
}

/** The arguments to give `node` (process.execPath): flags, then dist/server.js and "start". */
export function startArguments(root = process.cwd()): string[] {
  return startCommand(root).args;
}

/** The variables the start script sets in the server's environment (on top of the caller's). */
export function startEnvironment(root = process.cwd()): Record<string, string> {
  return startCommand(root).env;
}
