// Argument parsing for the admin CLI: node:util parseArgs for the syntax, zod for what the values must be.
// Anything wrong with the command line is a UsageError (exit 2, usage text on stderr); anything wrong with
// the data it names (a taken e-mail, a refused redirect URI) is an ordinary error (exit 1).
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { z } from "zod";

export class UsageError extends Error {
  override name = "UsageError";
}

export type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/** Options every command takes. */
export const COMMON_OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies OptionsConfig;

export type CommonFlags = { json: boolean; help: boolean };

/** Parses `args` (the command line after the command name) strictly: unknown options and stray words are refused. */
export function parseOptions(args: string[], options: OptionsConfig): { flags: CommonFlags; values: Record<string, unknown> } {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args, options: { ...options, ...COMMON_OPTIONS }, strict: true, allowPositionals: false }));
  } catch (error) {
    // parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes and a sentence that names the option.
    throw new UsageError((error as Error).message.split("\n")[0]!);
  }
  const { json, help, ...rest } = values;
  return { flags: { json: json === true, help: help === true }, values: rest };
}

/** Validates parsed option values; the first problem becomes a UsageError. */
export function validateOptions<T extends z.ZodType>(schema: T, values: Record<string, unknown>): z.infer<T> {
  const result = schema.safeParse(values);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const message = issue.message.replace(/^Invalid input: /, "");
  if (message.startsWith("--")) throw new UsageError(message); // a message written for the CLI names its flag
  const flag = issue.path.length ? `--${String(issue.path[0])}` : "options";
  throw new UsageError(`${flag}: ${message}`);
}
