// The reference check of `npm run lint` (scripts/check-references.ts): GitHub's heading anchors, what counts
// as a citation, and the whole check over files held in memory. The names the check refuses are put together
// here from parts, so that this file does not trip the check it tests.
import { describe, expect, it } from "vitest";
import { anchors, check, docsCitations, forbiddenCitations, markdownLinks, slug } from "./check-references";

const DOCS = ["do", "cs/"].join("");
const NOTE = ["CONTRACT", "md"].join(".");
const ISSUE = ["iss", "ue 12"].join("");

describe("slug: GitHub's anchor of a heading", () => {
  it.each([
    ["Who sees an e-mail address", "who-sees-an-e-mail-address"],
    ["UserInfo", "userinfo"],
    ["Sign-up and confirmation", "sign-up-and-confirmation"],
    ["`client_credentials` grant", "client_credentials-grant"],
    ["Errors (and 4xx): what, why?", "errors-and-4xx-what-why"],
    ["Q&A", "qa"],
    ["Two  spaces", "two--spaces"],
    ["  Trimmed  ", "trimmed"],
    ["[Linked](other.md) heading", "linked-heading"],
    ["Größe und Maß", "größe-und-maß"],
  ])("%j -> %j", (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });
});

describe("anchors: what a markdown file offers to #", () => {
  it("takes every heading level, numbers repeated headings, and reads <a id> and <a name>", () => {
    const markdown = ["# Title", "## Limits", "### Limits", "#### Closing hashes ##", '<a id="custom"></a>', '<a name="old-style"></a>', "Not # a heading"].join("\n");
    expect([...anchors(markdown)].sort()).toEqual(["closing-hashes", "custom", "limits", "limits-1", "old-style", "title"]);
  });

  it("ignores headings inside fenced code blocks, of either fence", () => {
    const markdown = ["```sh", "# a shell comment", "```", "~~~", "## Also code", "~~~", "## Real"].join("\n");
    expect([...anchors(markdown)]).toEqual(["real"]);
  });

  it("needs a space after the hashes, as GitHub does", () => {
    expect([...anchors("#hashtag\n##Nope\n## Yes")]).toEqual(["yes"]);
  });
});

describe("forbiddenCitations: what a reader cannot follow", () => {
  it("finds the working notes by name and issues by number", () => {
    expect(forbiddenCitations(`see ${NOTE} 13 and ${ISSUE}, point 4`)).toEqual([NOTE, ISSUE]);
    expect(forbiddenCitations(`(${["Issues", "8"].join(" ")} and 9; ${["issue", "#4"].join(" ")})`)).toEqual([
      ["Issues", "8"].join(" "),
      ["issue", "#4"].join(" "),
    ]);
    expect(forbiddenCitations(["SPEC", "STACK", "ARCHITECTURE"].map((name) => `${name}.md`).join(", "))).toHaveLength(3);
  });

  it("lets ordinary words and our own files pass", () => {
    for (const line of [
      "the server issued 3 tokens",
      "tokens issue at once; an issue with 2 clients",
      `${DOCS}rules/specification.md#errors`,
      "tissue 12",
      "contract.md in lower case is not one of the notes",
    ]) {
      expect(forbiddenCitations(line), line).toEqual([]);
    }
  });
});

describe("docsCitations: docs/ paths cited in any file", () => {
  it("reads the path and the anchor, whatever punctuation follows", () => {
    expect(docsCitations(`// (${DOCS}rules/tokens.md#refresh, ${DOCS}api.md). See ${DOCS}design.md.`)).toEqual([
      { path: `${DOCS}rules/tokens.md`, anchor: "refresh" },
      { path: `${DOCS}api.md`, anchor: null },
      { path: `${DOCS}design.md`, anchor: null },
    ]);
    expect(docsCitations(`"${DOCS}testing.md#mutation-testing": yes`)).toEqual([{ path: `${DOCS}testing.md`, anchor: "mutation-testing" }]);
  });

  it("takes only paths from the repository's root to markdown files", () => {
    expect(docsCitations(`app/${DOCS}page.tsx, src/${DOCS}notes.md, ${DOCS}rules/, ${DOCS}file.mdx`)).toEqual([]);
  });
});

describe("markdownLinks: relative link targets of a markdown line", () => {
  it("reads inline links, images and reference definitions, with their anchors", () => {
    expect(markdownLinks('See [the API](api.md#tokens "title") and ![a drawing](img/layers.svg), [here](#limits).')).toEqual([
      { path: "api.md", anchor: "tokens" },
      { path: "img/layers.svg", anchor: null },
      { path: "", anchor: "limits" },
    ]);
    expect(markdownLinks("[rules]: rules/README.md#sources")).toEqual([{ path: "rules/README.md", anchor: "sources" }]);
  });

  it("leaves out absolute URLs, mail links and code spans", () => {
    expect(markdownLinks("[RFC 6749](https://www.rfc-editor.org/rfc/rfc6749) [mail](mailto:a@example.com) `[x](nowhere.md)`")).toEqual([]);
  });
});

describe("check: the whole rule over a repository held in memory", () => {
  const docs: Record<string, string> = {
    [`${DOCS}rules/tokens.md`]: "# Tokens and grants\n\n## Refresh\n\n## DPoP\n",
    [`${DOCS}api.md`]: "# API\n\n## Tokens\n\nSee [refresh](rules/tokens.md#refresh) and [up](../README.md).\n",
    "README.md": "# Project\n\n## Start\n",
    "src/db/client.ts": "",
  };
  const read = (path: string) => docs[path] ?? null;
  const run = (files: Record<string, string>) => check(Object.entries(files).map(([path, text]) => ({ path, text })), read);

  it("passes a file whose citations all resolve, and counts them", () => {
    const { problems, citations } = run({ "src/a.ts": `// ${DOCS}rules/tokens.md#refresh and ${DOCS}rules/tokens.md#dpop (RFC 9449); ${DOCS}api.md\n` });
    expect(problems).toEqual([]);
    expect(citations).toBe(3);
  });

  it("names each problem with its file and line", () => {
    const { problems } = run({
      "src/a.ts": ["// fine", `// ${NOTE} 4`, `// ${ISSUE}`, `// ${DOCS}nope.md`, `// ${DOCS}rules/tokens.md#rotation`].join("\n"),
    });
    expect(problems).toEqual([
      { file: "src/a.ts", line: 2, message: `"${NOTE}": cite docs/ or an RFC, not the working notes or an issue` },
      { file: "src/a.ts", line: 3, message: `"${ISSUE}": cite docs/ or an RFC, not the working notes or an issue` },
      { file: "src/a.ts", line: 4, message: `${DOCS}nope.md: no such file` },
      { file: "src/a.ts", line: 5, message: `${DOCS}rules/tokens.md#rotation: ${DOCS}rules/tokens.md has no heading #rotation` },
    ]);
  });

  it("resolves a markdown file's links against its own folder, and a bare #anchor against itself", () => {
    expect(run({ [`${DOCS}api.md`]: docs[`${DOCS}api.md`]! }).problems).toEqual([]);
    const { problems } = run({
      [`${DOCS}rules/x.md`]: [
        "# X",
        "## Here",
        "[ok](#here) [bad](#there) [up](../api.md#tokens) [wrong](../api.md#refresh)",
        "[code](../../src/db/client.ts) [gone](../../src/server/nothing.ts) [out](../../../etc/passwd)",
        "```",
        "[not a link](missing.md)",
        "```",
      ].join("\n"),
    });
    expect(problems.map((problem) => `${problem.line}: ${problem.message}`)).toEqual([
      `3: (#there): ${DOCS}rules/x.md has no heading #there`,
      `3: (../api.md#refresh): ${DOCS}api.md has no heading #refresh`,
      "4: (../../src/server/nothing.ts): no such file",
      "4: (../../../etc/passwd): outside the repository",
    ]);
  });

  it("checks migrations like every other file (their comments may be reworded: src/db/migrate.ts REWORDED)", () => {
    const migration = "prisma/sqlite/migrations/20261124000000_token_cache/migration.sql";
    const { problems } = run({ [migration]: `-- ${ISSUE}: ${DOCS}nope.md\nCREATE TABLE x (id INTEGER);\n` });
    expect(problems.map((problem) => problem.message)).toEqual([expect.stringContaining("cite docs/ or an RFC"), `${DOCS}nope.md: no such file`]);
  });
});
