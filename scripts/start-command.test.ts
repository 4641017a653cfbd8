// The production command as package.json's `start` script holds it (scripts/start-command.ts,
// docs/design.md#memory): what the bench, the fault script and the e2e suite start.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startArguments, startEnvironment } from "./start-command";

const dirs: string[] = [];
const withStart = (start: string) => {
  const dir = mkdtempSync(join(tmpdir(), "start-command-"));
  dirs.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ scripts: { start } }));
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the start script", () => {
  it("sets glibc's fixed mmap threshold, so that the large buffers of start (V8 parsing and compiling Next's bundles) go back to the system once freed, and runs node on the compiled server", () => {
    expect(startEnvironment()).toEqual({ GLIBC_TUNABLES: "glibc.malloc.mmap_threshold=131072" });
    expect(startArguments().slice(-2)).toEqual(["dist/server.js", "start"]);
  });

  it("reads the variables before node, the flags after it, and refuses any other shape", () => {
    const dir = withStart("A=1 B_2=x=y node --flag dist/server.js start");
    expect(startEnvironment(dir)).toEqual({ A: "1", B_2: "x=y" });
    expect(startArguments(dir)).toEqual(["--flag", "dist/server.js", "start"]);
    expect(startEnvironment(withStart("node dist/server.js start"))).toEqual({});
    for (const bad of ["npm run serve", "A=1 tsx scripts/serve.ts start", "node dist/server.js"]) {
      expect(() => startArguments(withStart(bad))).toThrow(/must be "\[NAME=value \.\.\.\] node \[flags\] dist\/server\.js start"/);
    }
  });
});
