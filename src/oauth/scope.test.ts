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

  /** What parseScope throws for `raw`, or null when it does not throw. */
  const failure = (raw: string): unknown => {
    try {
      parseScope(raw);
      return null;
    } catch (error) {
      return error;
    }
  };

  it.each(["readonly admin", "admin", "READONLY", "ReadWrite", "readonly Readwrite", "read only"])(
    "refuses %j with invalid_scope: unknown names, and known ones in another case (scopes are case-sensitive, RFC 6749 3.3)",
    (raw) => {
      const error = failure(raw);
      expect(error).toBeInstanceOf(OAuthError);
      expect({ code: (error as OAuthError).code, status: (error as OAuthError).status }).toEqual({ code: "invalid_scope", status: 400 });
    },
  );

  it("lets readwrite cover readonly but not the other way round", () => {
    expect(allows(["readwrite"], "readonly")).toBe(true);
    expect(allows(["readonly"], "readwrite")).toBe(false);
    expect(isSubset(["readonly"], ["readonly", "readwrite"])).toBe(true);
    expect(isSubset(["readwrite"], ["readonly"])).toBe(false);
    expect(formatScope(["readwrite", "readonly"])).toBe("readonly readwrite");
  });

  it("lets readwrite stand in for readonly only: OpenID Connect scopes grant no API scope, and readwrite no OpenID Connect one", () => {
    expect(allows(["openid", "profile", "email"], "readonly")).toBe(false);
    expect(allows([], "readonly")).toBe(false);
    for (const identity of ["openid", "profile", "email"] as const) expect(allows(["readonly", "readwrite"], identity)).toBe(false);
    expect(allows(["openid", "email"], "email")).toBe(true);
    // A consent or a refresh token for the API scopes does not cover a new request for the user's e-mail address.
    expect(isSubset(["readonly", "email"], ["readonly", "readwrite"])).toBe(false);
  });
});
