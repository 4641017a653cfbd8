import { describe, expect, it } from "vitest";
import { folderOf, foldersInCircles } from "./check-folders";

describe("the folder check of npm run lint", () => {
  it("names a module's folder of src/ or app/, and nothing for a file beside them", () => {
    expect(folderOf("src/oauth/grants/x.ts")).toBe("src/oauth");
    expect(folderOf("app/api/health/route.ts")).toBe("app");
    expect(folderOf("src/env.ts")).toBeNull();
  });

  it("finds two folders that import each other, and a longer ring", () => {
    expect(foldersInCircles([["src/a", "src/b"], ["src/b", "src/a"]])).toEqual([["src/a", "src/b"]]);
    expect(foldersInCircles([["src/a", "src/b"], ["src/b", "src/c"], ["src/c", "src/a"], ["src/c", "src/d"]])).toEqual([["src/a", "src/b", "src/c"]]);
  });

  it("passes folders that import one way", () => {
    expect(foldersInCircles([["src/a", "src/b"], ["src/b", "src/c"], ["src/a", "src/c"]])).toEqual([]);
  });
});
