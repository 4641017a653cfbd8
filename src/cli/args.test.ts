// The admin CLI's option parsing: a value that begins with a dash (a signing key's kid is base64url, RFC 7638)
// is taken as the value of the option before it, unless it is itself one of the command's options.
import { describe, expect, it } from "vitest";
import { parseOptions, UsageError } from "@/cli/args";

const options = { kid: { type: "string" }, name: { type: "string" } } as const;

describe("parseOptions", () => {
  it("takes a value that begins with a dash as the value of the option before it", () => {
    expect(parseOptions(["--kid", "-q3cASa2x", "--json"], options)).toEqual({ flags: { json: true, help: false }, values: { kid: "-q3cASa2x" } });
    expect(parseOptions(["--kid=-q3cASa2x"], options).values).toEqual({ kid: "-q3cASa2x" });
    expect(parseOptions(["--name", "-", "--kid", "_x"], options).values).toEqual({ name: "-", kid: "_x" });
  });

  it("still refuses an option whose value was forgotten before another option, and unknown options", () => {
    expect(() => parseOptions(["--kid", "--json"], options)).toThrow(UsageError);
    expect(() => parseOptions(["--kid", "--name=x"], options)).toThrow(UsageError);
    expect(() => parseOptions(["--kid", "-h"], options)).toThrow(UsageError);
    expect(() => parseOptions(["--kid", "x", "--other", "y"], options)).toThrow(/Unknown option '--other'/);
  });
});
