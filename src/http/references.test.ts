import { describe, expect, it } from "vitest";
import { idFromReference } from "@/http/references";

const BUNDLES = "/api/bundle/";

describe("references to resources", () => {
  it("reads a positive safe integer, digits, a path or an absolute URL on APP_URL", () => {
    expect(idFromReference(7, BUNDLES)).toBe(7);
    expect(idFromReference(" 7 ", BUNDLES)).toBe(7);
    expect(idFromReference("/api/bundle/7/", BUNDLES)).toBe(7);
    expect(idFromReference("/api/bundle/7", BUNDLES)).toBe(7);
    expect(idFromReference("http://localhost:3000/api/bundle/7/", BUNDLES)).toBe(7);
  });

  it.each([0, -1, 1.5, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY])("refuses the number %d", (value) => {
    expect(idFromReference(value, BUNDLES)).toBeNull();
  });

  it.each([
    "0",
    "0000",
    "1234567890123",
    "/api/bundle/0/",
    "/api/BUNDLE/7/",
    "/api/bundles/7/",
    "/api/user/7/",
    "/api/bundle/7/8/",
    "/api/bundle/7/8",
    "/api/bundle//7",
    "/api/bundle/x/",
    "//evil.example/api/bundle/7/",
    "https://evil.example/api/bundle/7/",
    "http://localhost:3000/api/bundle/7/?x=1",
    "http://localhost:3000/api/bundle/7/#x",
    "not a reference at all",
    "",
  ])("refuses %j", (value) => {
    expect(idFromReference(value, BUNDLES)).toBeNull();
  });

  it.each([null, undefined, true, {}, [7]])("refuses the value %j", (value) => {
    expect(idFromReference(value, BUNDLES)).toBeNull();
  });
});
