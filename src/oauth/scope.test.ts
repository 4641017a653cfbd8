import { describe, expect, it } from "vitest";
import { OAuthError } from "@/oauth/errors";
import { allows, formatScope, isSubset, parseScope } from "@/oauth/scope";

describe("scopes", () => {
  it("parses space- and comma-separated lists into canonical order without duplicates", () => {
    expect(parseScope("readwrite readonly")).toEqual(["readonly", "readwrite"]);
    expect(parseScope("readonly,readwrite, readonly")).toEqual(["readonly", "readwrite"]);
    expect(parseScope("  readonly  ")).toEqual(["readonly"]);
  });

  it("reads an empty or missing scope as null", () => {
    expect(parseScope("")).toBeNull();
    expect(parseScope(undefined)).toBeNull();
    expect(parseScope(" , ")).toBeNull();
  });

  it("refuses an unknown scope with invalid_scope", () => {
    expect(() => parseScope("readonly admin")).toThrow(OAuthError);
    try {
      parseScope("READONLY");
    } catch (error) {
      expect((error as OAuthError).code).toBe("invalid_scope");
    }
  });

  it("lets readwrite cover readonly but not the other way round", () => {
    expect(allows(["readwrite"], "readonly")).toBe(true);
    expect(allows(["readonly"], "readwrite")).toBe(false);
    expect(isSubset(["readonly"], ["readonly", "readwrite"])).toBe(true);
    expect(isSubset(["readwrite"], ["readonly"])).toBe(false);
    expect(formatScope(["readwrite", "readonly"])).toBe("readonly readwrite");
  });
});
