// Every environment variable the service reads, parsed once with zod (docs/rules/operations.md#environment).
// Nothing else reads process.env. A missing or malformed variable raises EnvError whose message is one line
// naming it.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { z } from "zod";

export class EnvError extends Error {
  override name = "EnvError";
}

const blankToUndefined = (value: unknown) => (typeof value === "string" && value.trim() === "" ? undefined : value);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankToUndefined, schema.optional());

const ZRawEnv = z.object({
  NODE_ENV: optional(z.enum(["development", "production", "test"])),
  PORT: optional(z.coerce.number().int().min(1).max(65535)),
  APP_URL: optional(
    z
      .url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" })
      .refine((value) => {
        if (!URL.canParse(value)) return true; // reported by z.url() already
        const url = new URL(value);
        return url.pathname === "/" && !url.search && !url.hash;
      }, "must be an origin without a path, query or fragment (e.g. https://auth.example.com)"),
  ),
  DATABASE_URL: optional(
    z
      .string()
      .refine(
        (value) => /^file:.+/.test(value) || /^postgres(ql)?:\/\/.+/.test(value),
        "must start with file: (SQLite) or postgresql:// (PostgreSQL)",
      ),
  ),
  AUTH_SECRET: optional(z.string().min(32, "must be at least 32 characters")),
  RESEND_API_KEY: optional(z.string().min(1)),
  // The Resend SDK's own variable (its API's base URL), so that a local stand-in can play Resend.
  RESEND_BASE_URL: optional(z.url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" })),
  METRICS_TOKEN: optional(z.string().min(16, "must be at least 16 characters")),
  MAIL_FROM: optional(z.string().min(3)),
  TRUST_PROXY: optional(z.enum(["0", "1"], { error: "must be 0 or 1" })),
  DEV_MAILBOX: optional(z.enum(["0", "1"], { error: "must be 0 or 1" })),
  LOG_LEVEL: optional(z.enum(["debug", "info", "warn", "error", "silent"])),
  ALLOW_DEV_DATABASE: optional(z.enum(["0", "1"], { error: "must be 0 or 1" })),
  REGISTRATION: optional(z.enum(["off", "token", "open"], { error: "must be off, token or open" })),
  TOKEN_CACHE_SIZE: optional(z.coerce.number({ error: "must be an integer from 0 to 1000000" }).int("must be an integer from 0 to 1000000").min(0, "must be an integer from 0 to 1000000").max(1_000_000, "must be an integer from 0 to 1000000")),
  WORKERS: optional(z.coerce.number({ error: "must be an integer from 1 to 64" }).int("must be an integer from 1 to 64").min(1, "must be an integer from 1 to 64").max(64, "must be an integer from 1 to 64")),
  MAX_CONNECTIONS: optional(z.coerce.number({ error: "must be an integer from 1 to 1000000" }).int("must be an integer from 1 to 1000000").min(1, "must be an integer from 1 to 1000000").max(1_000_000, "must be an integer from 1 to 1000000")),
  CLIENT_ID_METADATA: optional(z.enum(["on", "off"], { error: "must be on or off" })),
  CLIENT_ID_METADATA_INSECURE_ORIGIN: optional(
    z.string().refine((value) => {
      if (!URL.canParse(value)) return false;
      const url = new URL(value);
      return url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname) && url.port !== "" && url.origin === value;
    }, "must be an http loopback origin with a port, e.g. http://127.0.0.1:8123 (tests and development only)"),
  ),
  BACKCHANNEL_LOGOUT_PRIVATE_ADDRESSES: optional(z.enum(["on", "off"], { error: "must be on or off" })),
  HASH_QUEUE: optional(z.coerce.number({ error: "must be a positive integer" }).int("must be a positive integer").min(1, "must be a positive integer").max(1_000_000, "must be at most 1000000")),
});

export type Env = {
  nodeEnv: "development" | "production" | "test";
  port: number;
  appUrl: string; // origin, no trailing slash
  databaseUrl: string;
  database: { kind: "sqlite"; file: string } | { kind: "postgresql"; url: string };
  authSecret: string;
  resendApiKey: string | null;
  /** Resend's API base URL (RESEND_BASE_URL), or null for the SDK's default. */
  resendBaseUrl: string | null;
  /** Bearer token of GET /api/metrics; null: the endpoint is 404. */
  metricsToken: string | null;
  mailFrom: string;
  trustProxy: boolean;
  devMailbox: boolean;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** `npm start` processes serving on one port (docs/rules/operations.md#workers). */
  workers: number;
  /** `npm start` may serve the development database (DEFAULT_DATABASE_URL): ALLOW_DEV_DATABASE=1. */
  allowDevDatabase: boolean;
  /**
   * Who may register a client by RFC 7591 (docs/rules/tokens.md#dynamic-registration): nobody, holders of an
   * initial access token, anyone.
   */
  registration: "off" | "token" | "open";
  /** Live access tokens each process keeps on SQLite between commits (src/db/fast-sql.ts); 0: none. */
  tokenCacheSize: number;
  /** Open connections each `npm start` process serves at most (src/server/front.ts); more are closed at once. */
  maxConnections: number;
  /**
   * client_ids that are URLs of client ID metadata documents (CLIENT_ID_METADATA, default on;
   * docs/rules/tokens.md#client-id-metadata-documents).
   */
  clientIdMetadata: boolean;
  /** CLIENT_ID_METADATA_INSECURE_ORIGIN: the one http loopback origin documents may come from (tests and development only), or null. */
  clientIdMetadataInsecureOrigin: string | null;
  /**
   * BACKCHANNEL_LOGOUT_PRIVATE_ADDRESSES: whether logout tokens may be sent to loopback and private addresses
   * (default: only outside production; docs/rules/openid-connect.md#back-channel-logout).
   */
  backchannelLogoutPrivateAddresses: boolean;
  /** Password hashes that may wait for a hashing slot (HASH_QUEUE); null: about two seconds of hashing, as measured (src/users/passwords.ts). */
  hashQueue: number | null;
};

const SECRET_FILE = ".data/auth-secret";
/** The development database: `npm run dev` seeds it with demo users (src/cli/seed.ts). */
export const DEFAULT_DATABASE_URL = "file:./.data/dev.db";

/**
 * In development the session secret is generated once and kept under .data/
 * (docs/rules/operations.md#environment).
 */
function developmentSecret(): string {
  const file = resolve(SECRET_FILE);
  if (existsSync(file)) {
    const existing = readFileSync(file, "utf8").trim();
    if (existing.length >= 32) return existing;
  }
  mkdirSync(dirname(file), { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, secret + "\n", { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

export function parseEnv(source: Record<string, string | undefined>): Env {
  const parsed = ZRawEnv.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? "environment");
    throw new EnvError(`Environment variable ${name} ${issue.message.replace(/^Invalid input: ?/, "is invalid: ")}`);
  }
  const raw = parsed.data;
  const nodeEnv = raw.NODE_ENV ?? "development";
  const port = raw.PORT ?? 3000;
  const appUrl = (raw.APP_URL ?? `http://localhost:${port}`).replace(/\/$/, "");
  const databaseUrl = raw.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const database = databaseUrl.startsWith("file:")
    ? ({ kind: "sqlite", file: resolve(databaseUrl.slice("file:".length)) } as const)
    : ({ kind: "postgresql", url: databaseUrl } as const);
  let authSecret = raw.AUTH_SECRET;
  if (!authSecret) {
    if (nodeEnv === "production") throw new EnvError("Environment variable AUTH_SECRET is required in production");
    authSecret = developmentSecret();
  }
  return {
    nodeEnv,
    port,
    appUrl,
    databaseUrl,
    database,
    authSecret,
    resendApiKey: raw.RESEND_API_KEY ?? null,
    resendBaseUrl: raw.RESEND_BASE_URL?.replace(/\/$/, "") ?? null,
    metricsToken: raw.METRICS_TOKEN ?? null,
    mailFrom: raw.MAIL_FROM ?? "Bundle permissions <no-reply@localhost>",
    trustProxy: raw.TRUST_PROXY === "1",
    devMailbox: raw.DEV_MAILBOX === "1" || (raw.DEV_MAILBOX !== "0" && nodeEnv !== "production"),
    logLevel: raw.LOG_LEVEL ?? (nodeEnv === "test" ? "silent" : "info"),
    workers: raw.WORKERS ?? 1,
    allowDevDatabase: raw.ALLOW_DEV_DATABASE === "1",
    registration: raw.REGISTRATION ?? "off",
    tokenCacheSize: raw.TOKEN_CACHE_SIZE ?? 10_000,
    maxConnections: raw.MAX_CONNECTIONS ?? 10_000,
    hashQueue: raw.HASH_QUEUE ?? null,
    clientIdMetadata: raw.CLIENT_ID_METADATA !== "off",
    clientIdMetadataInsecureOrigin: raw.CLIENT_ID_METADATA_INSECURE_ORIGIN ?? null,
    backchannelLogoutPrivateAddresses: (raw.BACKCHANNEL_LOGOUT_PRIVATE_ADDRESSES ?? (nodeEnv === "production" ? "off" : "on")) === "on",
  };
}

/**
 * Loads .env files into process.env the way Next.js does (.env, .env.local, .env.<mode>, .env.<mode>.local;
 * variables already set win), so that the start-up checks, the CLI and the server all see the same values.
 */
export async function loadDotenvFiles(mode = process.env.NODE_ENV === "production" ? "production" : "development"): Promise<void> {
  // A CommonJS package whose names Node's own ESM loader cannot see (the compiled server, dist/): its
  // module.exports is then the default export.
  const nextEnv = (await import("@next/env")) as typeof import("@next/env") & { default?: typeof import("@next/env") };
  const { loadEnvConfig } = nextEnv.default ?? nextEnv;
  loadEnvConfig(process.cwd(), mode === "development", { info: () => {}, error: console.error }, true);
}

/**
 * Why `npm start` must not serve this database, or null: the development file (where `npm run dev` put demo
 * users whose passwords are in .data/demo.env), unless ALLOW_DEV_DATABASE=1.
 */
export function productionDatabaseProblem(e: Env): string | null {
  const development = resolve(DEFAULT_DATABASE_URL.slice("file:".length));
  if (e.allowDevDatabase || e.database.kind !== "sqlite" || e.database.file !== development) return null;
  return (
    `Refusing to serve the development database ${DEFAULT_DATABASE_URL} in production: it holds the demo users of ` +
    "`npm run dev`. Set DATABASE_URL (e.g. file:./.data/prod.db or postgresql://...), or ALLOW_DEV_DATABASE=1 to serve it anyway."
  );
}

let cached: Env | null = null;

export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}

/**
 * Tests only (NODE_ENV=test): changes parsed settings for the rest of the process, so that one test file can
 * exercise e.g. each REGISTRATION mode. Returns the previous values.
 */
export function setEnvForTests(patch: Partial<Env>): Partial<Env> {
  const current = env();
  if (current.nodeEnv !== "test") throw new Error("setEnvForTests outside tests");
  const previous = Object.fromEntries(Object.keys(patch).map((key) => [key, current[key as keyof Env]])) as Partial<Env>;
  cached = { ...current, ...patch };
  return previous;
}

/** next-auth reads its own variables; they are derived here, in one place, from ours. */
export function nextAuthEnvironment(e: Env): Record<string, string> {
  return { NEXTAUTH_URL: e.appUrl, NEXTAUTH_SECRET: e.authSecret };
}
