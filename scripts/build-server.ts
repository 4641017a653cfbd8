// The second half of `npm run build` (after `next build`): compiles the custom server of `npm start` to plain
// JavaScript in dist/, so that production runs `node dist/server.js start` with no TypeScript loader in the
// process (docs/design.md#memory). One esbuild bundle with code splitting, from these entry points:
//   scripts/serve.ts                         -> dist/server.js (what it imports, src/server/ and the domain
//                                               modules, in shared chunks under dist/chunks/)
//   app/api/**/route.ts, app/.well-known/**   -> dist/app/**/route.js, the fast lane's route modules
//                                               (src/server/routes.ts builds its table from dist/app)
// Shared code lands in one chunk that every entry imports, so the server and its route modules share one copy
// of each module (one database holder, one metrics registry), as they do under tsx. Packages stay plain
// imports from node_modules (Next, Prisma's runtime, the native modules); the `@/` and `@emails/` aliases of
// tsconfig.json are resolved by esbuild. Source maps sit beside each file: `node --enable-source-maps` maps
// stack traces back to the TypeScript when wanted (it holds the maps in memory, so production runs without).
import { build, type Plugin } from "esbuild";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { buildRouteTable, FAST_LANE_ROOTS } from "../src/server/routes";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const DIST = join(ROOT, "dist");

/**
 * Node's own ESM loader, unlike tsx and bundlers, finds a subpath of a package without an "exports" map only
 * by its exact file name: `next/server` must be imported as `next/server.js`. Such imports stay external,
 * with the extension added.
 */
const exactSubpaths: Plugin = {
  name: "exact-subpaths",
  setup(builder) {
    builder.onResolve({ filter: /^(@[^/.][^/]*\/)?[^/.@][^/]*\/[^.]+$/ }, ({ path }) => {
      const parts = path.split("/");
      const name = parts.slice(0, path.startsWith("@") ? 2 : 1).join("/");
      const manifest = join(ROOT, "node_modules", name, "package.json");
      if (!existsSync(manifest) || (JSON.parse(readFileSync(manifest, "utf8")) as { exports?: unknown }).exports) return undefined;
      return existsSync(join(ROOT, "node_modules", `${path}.js`)) ? { path: `${path}.js`, external: true } : undefined;
    });
  },
};

/**
 * Compiles the server and the fast lane's route modules into `outdir` (dist/, emptied first); returns the
 * packages the output imports, as written in it (for the test that Node's own loader finds each one).
 */
export async function buildServer(outdir = DIST): Promise<string[]> {
  const routes = buildRouteTable(join(ROOT, "app"), FAST_LANE_ROOTS).routes.map((route) => route.file);
  const entryPoints = [
    { in: join(ROOT, "scripts", "serve.ts"), out: "server" },
    ...routes.map((file) => ({ in: file, out: relative(ROOT, file).replace(/\.(ts|js|mjs)$/, "") })),
  ];
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints,
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    sourcemap: true,
    chunkNames: "chunks/[name]-[hash]",
    tsconfig: join(ROOT, "tsconfig.json"),
    logLevel: "warning",
    metafile: true,
    plugins: [exactSubpaths],
  });
  const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  console.log(`Compiled the server: ${entryPoints.length} entry points, ${Object.keys(result.metafile.outputs).length} files in ${relative(ROOT, outdir)}/ (${(bytes / 1024 / 1024).toFixed(1)} MiB with source maps)`);
  const packages = Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((used) => used.external).map((used) => used.path));
  return [...new Set(packages)].sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildServer();
