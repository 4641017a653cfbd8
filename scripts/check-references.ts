// npm run lint's reference check: the repository stands on its own, so every reference in it must resolve.
// It reads every file git tracks (text only) and fails, listing file:line, when
//   - a line names a working note that lives outside the repository (the four upper-case note files) or cites
//     an issue by number ("issue 12", "issues 8 and 9"): a reader has neither, so cite docs/ or an RFC instead;
//   - a docs/...md path cited anywhere does not exist, or its #anchor is not a heading of that file (GitHub's
//     anchors: docs/rules/tokens.md#refresh for the heading "## Refresh");
//   - a link in a markdown file, [text](relative/path.md#anchor), points at a file that does not exist or at an
//     anchor that file lacks (a bare #anchor: a heading of the same file).
// Skipped: binaries and package-lock.json. The mutation baseline, a machine record of source text as it was
// measured, is held to the first rule only: the docs/ paths its older sources cite may have moved since.
// Clean: one line, "references: N files, M docs citations, all resolve", and exit 0.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { posix } from "node:path";
import { pathToFileURL } from "node:url";

/** Files whose text is a machine record of other files, or this check itself (it names what it looks for). */
const SKIPPED = new Set([
  "package-lock.json",
  "mutation/baseline.json",
  "scripts/check-references.ts",
]);
/** Machine records held to the first rule only (no working notes, no issue numbers). */
const CITATIONS_ONLY = ["mutation/baseline.json"];

const NOTES = ["CONTRACT", "SPEC", "STACK", "ARCHITECTURE"].map((name) => `${name}.md`);
const NOTE_PATTERN = new RegExp(`\\b(${NOTES.map((name) => name.replace(".", "\\.")).join("|")})\\b`, "g");
const ISSUE_PATTERN = /\bissues? #?\d+/gi;
/** A docs/ path (from the repository's root) to a markdown file, with its anchor if any. */
const DOCS_PATTERN = /(?<![\w./-])(docs\/[\w./-]*?\.md)(?![\w])(?:#([\w-]+))?/g;
/** Inline markdown links and images, [text](target "title"), and reference definitions, [label]: target. */
const LINK_PATTERN = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const DEFINITION_PATTERN = /^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/;

export type Problem = { file: string; line: number; message: string };

/** GitHub's anchor for a heading: lower case, only letters, digits, spaces, dashes and underscores, spaces to dashes. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-");
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): Array<[number, string]> {
  const result: Array<[number, string]> = [];
  let fence: string | null = null;
  markdown.split("\n").forEach((line, index) => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null && opening) fence = opening[1]!;
    else if (fence !== null && opening && opening[1]!.startsWith(fence)) fence = null;
    else if (fence === null) result.push([index + 1, line]);
  });
  return result;
}

/** Every anchor a markdown file offers: its headings' slugs (a repeated one gets -1, -2, ...), and <a id|name>. */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, line] of proseLines(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      found.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const html of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) found.add(html[1]!);
  }
  return found;
}

/** What a line says that a reader of the repository cannot follow: the working notes, issue numbers. */
export function forbiddenCitations(line: string): string[] {
  return [...line.matchAll(NOTE_PATTERN), ...line.matchAll(ISSUE_PATTERN)].map((match) => match[0]);
}

/** The docs/...md paths a line cites, each with its anchor (or null). */
export function docsCitations(line: string): Array<{ path: string; anchor: string | null }> {
  return [...line.matchAll(DOCS_PATTERN)].map((match) => ({ path: match[1]!.replace(/\/+$/, ""), anchor: match[2] ?? null }));
}

/** The relative link targets of one markdown line (not inside code spans): path (possibly empty) and anchor. */
export function markdownLinks(line: string): Array<{ path: string; anchor: string | null }> {
  const text = line.replace(/`[^`]*`/g, "");
  const targets = [...text.matchAll(LINK_PATTERN)].map((match) => match[1]!);
  const definition = DEFINITION_PATTERN.exec(text);
  if (definition) targets.push(definition[1]!);
  return targets
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith("//"))
    .map((target) => {
      const hash = target.indexOf("#");
      const path = hash === -1 ? target : target.slice(0, hash);
      return { path: decodeURIComponent(path), anchor: hash === -1 ? null : decodeURIComponent(target.slice(hash + 1)) };
    });
}

/** How the check sees the repository: a file's text, or null when there is no such file. */
export type Reader = (path: string) => string | null;

/**
 * Checks the given files (paths relative to the repository's root, with their text). What they cite is looked
 * up among them first, then with `read` (a cited file need not be tracked yet, e.g. docs still being written).
 */
export function check(files: Array<{ path: string; text: string }>, read: Reader): { problems: Problem[]; citations: number } {
  const problems: Problem[] = [];
  const given = new Map(files.map((file) => [file.path, file.text]));
  const readAny: Reader = (path) => given.get(path) ?? read(path);
  const anchorCache = new Map<string, Set<string> | null>();
  const anchorsOf = (path: string): Set<string> | null => {
    if (!anchorCache.has(path)) {
      const text = readAny(path);
      anchorCache.set(path, text === null ? null : anchors(text));
    }
    return anchorCache.get(path)!;
  };
  let citations = 0;
  const resolve = (file: string, line: number, cited: string, target: string, anchor: string | null) => {
    citations += 1;
    if (!target.endsWith(".md")) {
      if (readAny(target) === null) problems.push({ file, line, message: `${cited}: no such file` });
      return;
    }
    const offered = anchorsOf(target);
    if (offered === null) problems.push({ file, line, message: `${cited}: no such file` });
    else if (anchor !== null && !offered.has(anchor)) problems.push({ file, line, message: `${cited}: ${target} has no heading #${anchor}` });
  };
  for (const { path, text } of files) {
    const lines = text.split("\n");
    lines.forEach((line, index) => {
      for (const citation of forbiddenCitations(line)) {
        problems.push({ file: path, line: index + 1, message: `"${citation}": cite docs/ or an RFC, not the working notes or an issue` });
      }
    });
    lines.forEach((line, index) => {
      for (const { path: target, anchor } of docsCitations(line)) {
        resolve(path, index + 1, anchor === null ? target : `${target}#${anchor}`, target, anchor);
      }
    });
    if (path.endsWith(".md")) {
      for (const [number, line] of proseLines(text)) {
        for (const { path: target, anchor } of markdownLinks(line)) {
          const resolved = target === "" ? path : target.startsWith("/") ? target.slice(1) : posix.normalize(posix.join(posix.dirname(path), target));
          const cited = `(${target}${anchor === null ? "" : `#${anchor}`})`;
          if (resolved.startsWith("../")) problems.push({ file: path, line: number, message: `${cited}: outside the repository` });
          else resolve(path, number, cited, resolved.replace(/\/+$/, ""), anchor);
        }
      }
    }
  }
  return { problems, citations };
}

/** A file's text from the working tree, or null when there is none; a directory counts as present (""). */
function readFromDisk(path: string): string | null {
  if (!existsSync(path)) return null;
  return statSync(path).isDirectory() ? "" : readFileSync(path, "utf8");
}

function main(): void {
  const tracked = execFileSync("git", ["ls-files", "-z"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
    .split("\0")
    .filter((path) => path !== "" && !SKIPPED.has(path) && existsSync(path) && statSync(path).isFile());
  const files = tracked.flatMap((path) => {
    const bytes = readFileSync(path);
    return bytes.subarray(0, 8000).includes(0) ? [] : [{ path, text: bytes.toString("utf8") }];
  });
  const { problems, citations } = check(files, readFromDisk);
  for (const path of CITATIONS_ONLY.filter((record) => existsSync(record))) {
    readFileSync(path, "utf8")
      .split("\n")
      .forEach((line, index) => {
        for (const citation of new Set(forbiddenCitations(line))) {
          problems.push({ file: path, line: index + 1, message: `"${citation}": a stored source still cites the working notes or an issue` });
        }
      });
  }
  if (problems.length > 0) {
    for (const problem of problems) console.error(`${problem.file}:${problem.line}: ${problem.message}`);
    console.error(`references: ${problems.length} problem${problems.length === 1 ? "" : "s"} in ${files.length} files`);
    process.exit(1);
  }
  console.log(`references: ${files.length} files, ${citations} docs citations, all resolve`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
