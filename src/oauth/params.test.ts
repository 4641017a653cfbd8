// RFC 6749 3.1: "Parameters sent without a value MUST be treated as if they were omitted from the request"; a
// value that is not one string (a parameter sent twice, a JSON number) is an invalid_request. (The errors'
// detail texts are for the log only, never sent: not asserted.)
import { describe, expect, it } from "vitest";
import { OAuthError } from "@/oauth/errors";
import { requiredParam, stringParam } from "@/oauth/params";

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof OAuthError ? { error: error.code } : { thrown: String(error) };
  }
  return "not refused";
};

describe("request parameters", () => {
  it("treats a parameter sent without a value as omitted (RFC 6749 3.1)", () => {
    expect(stringParam({ scope: "" }, "scope")).toBeUndefined();
    expect(stringParam({}, "scope")).toBeUndefined();
    expect(stringParam({ scope: null }, "scope")).toBeUndefined();
    expect(refusal(() => requiredParam({ grant_type: "" }, "grant_type"))).toEqual({ error: "invalid_request" });
  });

  it("gives back a value as sent, and refuses one that is not a single string", () => {
    expect(stringParam({ scope: " read " }, "scope")).toBe(" read ");
    expect(requiredParam({ grant_type: "password" }, "grant_type")).toBe("password");
    expect(refusal(() => stringParam({ scope: ["a", "b"] }, "scope"))).toEqual({ error: "invalid_request" });
    expect(refusal(() => stringParam({ scope: 1 }, "scope"))).toEqual({ error: "invalid_request" });
  });
});
