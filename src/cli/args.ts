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

/**
 * `--opt -value` as `--opt=-value`: a value may begin with a dash (a signing key's kid is base64url), which
 * parseArgs refuses as ambiguous unless joined. Not when the word after is itself one of the options (then
 * the value was forgotten, and parseArgs says so).
 */
function joinDashValues(args: string[], options: OptionsConfig): string[] {
  const spellings = new Set(Object.entries(options).flatMap(([name, config]) => [`--${name}`, ...(config.short ? [`-${config.short}`] : [])]));
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const option = arg.startsWith("--") && Object.hasOwn(options, arg.slice(2)) ? options[arg.slice(2)] : undefined;
    if (option?.type === "string" && next !== undefined && next.startsWith("-") && next !== "--" && !spellings.has(next.split("=")[0]!)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** Parses `args` (the command line after the command name) strictly: unknown options and stray words are refused. */
export function parseOptions(args: string[], options: OptionsConfig): { flags: CommonFlags; values: Record<string, unknown> } {
  let values: Record<string, unknown>;
  const all = { ...options, ...COMMON_OPTIONS };
  try {
    ({ values } = parseArgs({ args: joinDashValues(args, all), options: all, strict: true, allowPositionals: false }));
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
