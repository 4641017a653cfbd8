// The compiled server of `npm run build` (scripts/build-server.ts, docs/design.md#memory): every route module
// of the fast lane has its compiled twin where the server's route table looks for it, and every package the
// output imports is one that Node's own ESM loader (not tsx, not a bundler) finds, as `node dist/server.js`
// needs: `next/server` fails there, `next/server.js` does not.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildRouteTable } from "@/server/routes";
import { buildServer } from "./build-server";

// Inside the repository, so that the output's packages resolve from its node_modules as dist/'s do.
const outdir = resolve(`.test-scratch/dist-${process.pid}`);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe("npm run build's compiled server", () => {
  it("has a compiled route module for every route of the fast lane, and only packages Node's loader finds", async () => {
    const packages = await buildServer(outdir);
    const patterns = (table: ReturnType<typeof buildRouteTable>) => table.routes.map((route) => route.pattern);
    expect(patterns(buildRouteTable(join(outdir, "app")))).toEqual(patterns(buildRouteTable(resolve("app"))));
    expect(packages).toContain("next");

    const probe = join(outdir, "resolve-probe.mjs");
    writeFileSync(
      probe,
      // import.meta.resolve names a file without checking that it is there: the probe checks.
      `import { existsSync } from "node:fs";
       import { fileURLToPath } from "node:url";
       const found = (name) => { try { const url = import.meta.resolve(name); return !url.startsWith("file:") || existsSync(fileURLToPath(url)); } catch { return false; } };
       console.log(JSON.stringify(${JSON.stringify(packages)}.filter((name) => !found(name))));`,
    );
    const missing = JSON.parse(execFileSync(process.execPath, [probe], { encoding: "utf8" })) as string[];
    expect(missing).toEqual([]);
  }, 60_000);
});
