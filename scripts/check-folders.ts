// The folders of src/ depend on each other one way (docs/design.md#layers): no two folders, and no longer
// ring of folders, import each other, even where no single file goes round a circle (dependency-cruiser's
// no-circular rule, .dependency-cruiser.cjs, checks files). Part of `npm run lint`. Tests and the tests'
// harness are left out: a test may reach into any folder.
// `tsx scripts/check-folders.ts --floors` prints the folders by floor: each imports only folders below it.
import { cruise } from "dependency-cruiser";

/** The folder of a module: src/<name>/ or app/; a file directly in src/ (src/env.ts) is its own. */
export function folderOf(path: string): string | null {
  const match = /^(src\/[^/]+(?=\/)|app(?=\/)|src\/[^/]+\.tsx?$)/.exec(path);
  return match ? match[1]! : null;
}

/** Each folder's floor: 1 for a folder that imports no other, else one above the highest folder it imports. */
export function floors(edges: ReadonlyArray<readonly [string, string]>, folders: Iterable<string>): Map<string, number> {
  const next = new Map<string, string[]>();
  for (const [from, to] of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const floor = new Map<string, number>();
  const of = (folder: string): number => {
    const known = floor.get(folder);
    if (known !== undefined) return known;
    const height = 1 + Math.max(0, ...(next.get(folder) ?? []).map(of));
    floor.set(folder, height);
    return height;
  };
  for (const folder of folders) of(folder);
  return floor;
}

/** Groups of folders that import each other (strongly connected components of more than one folder). */
export function foldersInCircles(edges: ReadonlyArray<readonly [string, string]>): string[][] {
  const next = new Map<string, Set<string>>();
  for (const [from, to] of edges) {
    if (from === to) continue;
    if (!next.has(from)) next.set(from, new Set());
    if (!next.has(to)) next.set(to, new Set());
    next.get(from)!.add(to);
  }
  // Tarjan's algorithm.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!order.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, order.get(to)!));
    }
    if (low.get(node) === order.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const node of [...next.keys()].sort()) if (!order.has(node)) visit(node);
  return groups;
}

async function main(): Promise<void> {
  const result = await cruise(["src", "app"], {
    exclude: { path: "^src/generated/|node_modules|\\.test\\.tsx?$|^src/testing/" },
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  });
  if (typeof result.output === "string") throw new Error("dependency-cruiser answered text, not modules");
  const seen = new Set<string>();
  const edges: [string, string][] = [];
  for (const cruised of result.output.modules) {
    const from = folderOf(cruised.source);
    if (!from) continue;
    for (const dependency of cruised.dependencies) {
      const to = folderOf(dependency.resolved);
      if (!to || to === from || seen.has(`${from} ${to}`)) continue;
      seen.add(`${from} ${to}`);
      edges.push([from, to]);
    }
  }
  const folders = new Set<string>();
  for (const cruised of result.output.modules) {
    const folder = folderOf(cruised.source);
    if (folder) folders.add(folder);
  }
  const circles = foldersInCircles(edges);
  if (circles.length > 0) {
    for (const circle of circles) {
      console.error(`folders that import each other: ${circle.join(", ")}`);
      for (const [from, to] of edges) if (circle.includes(from) && circle.includes(to)) console.error(`  ${from} -> ${to}`);
    }
    process.exit(1);
  }
  if (process.argv.includes("--floors")) {
    const byFloor = new Map<number, string[]>();
    for (const [folder, floor] of floors(edges, folders)) byFloor.set(floor, [...(byFloor.get(floor) ?? []), folder]);
    for (const floor of [...byFloor.keys()].sort((a, b) => b - a)) console.log(`${String(floor).padStart(3)}  ${byFloor.get(floor)!.sort().join("  ")}`);
  }
  console.log(`folders: ${folders.size} folders and files of src/ and app/, one way`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
