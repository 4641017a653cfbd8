import { describe, expect, it } from "vitest";
import { floors, folderOf, foldersInCircles } from "./check-folders";

describe("the folder check of npm run lint", () => {
  it("names a module's folder of src/ or app/, and nothing for a file beside them", () => {
    expect(folderOf("src/oauth/grants/x.ts")).toBe("src/oauth");
    expect(folderOf("app/api/health/route.ts")).toBe("app");
    expect(folderOf("src/env.ts")).toBe("src/env.ts");
    expect(folderOf("README.md")).toBeNull();
  });

  it("finds two folders that import each other, and a longer ring", () => {
    expect(foldersInCircles([["src/a", "src/b"], ["src/b", "src/a"]])).toEqual([["src/a", "src/b"]]);
    expect(foldersInCircles([["src/a", "src/b"], ["src/b", "src/c"], ["src/c", "src/a"], ["src/c", "src/d"]])).toEqual([["src/a", "src/b", "src/c"]]);
  });

  it("puts each folder one floor above the highest folder it imports", () => {
    const floor = floors([["app", "src/a"], ["src/a", "src/b"], ["app", "src/b"]], ["app", "src/a", "src/b", "src/c"]);
    expect(Object.fromEntries(floor)).toEqual({ app: 3, "src/a": 2, "src/b": 1, "src/c": 1 });
  });

  it("passes folders that import one way", () => {
    expect(foldersInCircles([["src/a", "src/b"], ["src/b", "src/c"], ["src/a", "src/c"]])).toEqual([]);
  });
});
