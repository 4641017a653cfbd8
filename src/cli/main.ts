// The admin CLI, `npm run cli -- <command> [options] [--json]` (docs/rules/operations.md#admin-cli). It uses
// the same environment as the server, applies pending migrations first (so it works on a fresh database), runs
// one command and exits. With --json, standard output holds exactly one JSON value; errors are one line on
// standard error: exit 1 for a refused operation, exit 2 (with the usage) for a malformed command line.
import { parseOptions, UsageError } from "@/cli/args";
import { COMMANDS, type Command, type Output } from "@/cli/commands";
import { env, loadDotenvFiles } from "@/env";
import { ApiError } from "@/http/errors";
import { allowLongStatements, disconnectDb } from "@/db/client";
import { migrate, MigrationError } from "@/db/migrate";

function overview(): string {
  const commands = Object.values(COMMANDS)
    .map((command) => `  ${command.usage}\n      ${command.summary}`)
    .join("\n");
  return [
    "Usage: npm run -s cli -- <command> [options] [--json]",
    "",
    "Commands:",
    commands,
    "",
    "Options for every command:",
    "  --json      print exactly one JSON value on standard output",
    "  --help, -h  show this help",
    "",
    "(-s keeps npm's own banner off standard output when the JSON is piped.)",
  ].join("\n");
}

const commandHelp = (command: Command) => `Usage: npm run -s cli -- ${command.usage} [--json]\n\n${command.summary}`;

/** One line, whatever was thrown (Prisma and driver messages can span several). */
function oneLine(error: unknown): string {
  const message = error instanceof ApiError ? error.error : error instanceof Error ? error.message : String(error);
  return message.trim().split(/\s*\n\s*/).filter(Boolean).join(" ") || "unexpected failure";
}

type Result = { code: number; stdout?: string; stderr?: string };

const LEADING_FLAGS = new Set(["--json", "--help", "-h"]);

async function run(argv: string[]): Promise<Result> {
  // `--json` and `--help` may also come before the command: `cli --json mail:list`, `cli --help user:create`.
  let start = 0;
  while (start < argv.length && LEADING_FLAGS.has(argv[start]!)) start++;
  const leading = argv.slice(0, start);
  const [name, ...rest] = argv.slice(start);
  const args = [...rest, ...leading];
  if (name === "help" || (name === undefined && leading.some((flag) => flag !== "--json"))) {
    return { code: 0, stdout: overview() };
  }
  if (name === undefined) return { code: 2, stderr: `error: no command given\n\n${overview()}` };
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    const what = name.startsWith("-") ? `the command must come first, before ${name}` : `unknown command "${name}"`;
    return { code: 2, stderr: `error: ${what}\n\n${overview()}` };
  }

  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(args, command.options);
  } catch (error) {
    return { code: 2, stderr: `error: ${oneLine(error)}\n\n${commandHelp(command)}` };
  }
  if (parsed.flags.help) return { code: 0, stdout: commandHelp(command) };

  try {
    const task = command.prepare(parsed.values);
    await loadDotenvFiles();
    env();
    allowLongStatements();
    await migrate();
    const output: Output = await task();
    return { code: 0, stdout: parsed.flags.json ? JSON.stringify(output.json, null, 2) : output.text };
  } catch (error) {
    if (error instanceof UsageError) return { code: 2, stderr: `error: ${error.message}\n\n${commandHelp(command)}` };
    if (error instanceof MigrationError) return { code: 1, stderr: `error: database migration refused: ${oneLine(error)}` };
    // EnvError, ApiError (a refused operation) and anything else: one line, exit 1.
    return { code: 1, stderr: `error: ${oneLine(error)}` };
  }
}

function writeOut(stream: NodeJS.WriteStream, text: string | undefined): Promise<void> {
  if (text === undefined) return Promise.resolve();
  return new Promise((done) => stream.write(text + "\n", () => done()));
}

const result = await run(process.argv.slice(2));
await disconnectDb().catch(() => {});
await writeOut(process.stdout, result.stdout);
await writeOut(process.stderr, result.stderr);
// Exit now: nothing the command started (a connection pool, a timer) may keep the process alive.
process.exit(result.code);
