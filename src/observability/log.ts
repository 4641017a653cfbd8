// Structured one-line logs. Every path and query string passes through redact() first, so that no token,
// code or secret reaches a log line (docs/rules/endpoints.md#records-and-identifiers).
import { env } from "@/env";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
type Level = Exclude<keyof typeof LEVELS, "silent">;

const SECRET_PARAMS =
  /([?&#](?:access_token|refresh_token|code|token|client_secret|password|code_verifier|id_token|state|user_code|device_code)=)[^&#\s]*/gi;
const SECRET_PATHS = /(\/api\/(?:accesstoken|oauth2token|bundle_permission_request)\/)(?!\d+\/?(?:$|[?#]))[^/?#\s]+/g;

export function redact(text: string): string {
  return text.replace(SECRET_PATHS, "$1[redacted]").replace(SECRET_PARAMS, "$1[redacted]");
}

function write(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  if (LEVELS[level] < LEVELS[env().logLevel]) return;
  // Each string is redacted on its own: redacting the serialized line would let a token path run on over the
  // closing quote and swallow the fields after it (or leave the line unterminated).
  const line = JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }, (_key, value: unknown) =>
    typeof value === "string" ? redact(value) : value,
  );
  (level === "error" || level === "warn" ? process.stderr : process.stdout).write(line + "\n");
}

export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write("debug", message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write("info", message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write("warn", message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write("error", message, fields),
};
