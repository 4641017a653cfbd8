import { describe, expect, it } from "vitest";
import { EnvError, parseEnv, productionDatabaseProblem } from "@/env";

const base = { NODE_ENV: "production", AUTH_SECRET: "s".repeat(32) } as const;

describe("environment", () => {
  it("has defaults for a development machine", () => {
    const env = parseEnv({ NODE_ENV: "test", AUTH_SECRET: "s".repeat(32) });
    expect(env.port).toBe(3000);
    expect(env.appUrl).toBe("http://localhost:3000");
    expect(env.database.kind).toBe("sqlite");
    expect(env.databaseUrl).toBe("file:./.data/dev.db");
    expect(env.resendApiKey).toBeNull();
    expect(env.trustProxy).toBe(false);
    expect(env.workers).toBe(1);
    expect(env.tokenCacheSize).toBe(10_000);
  });

  it("reads TOKEN_CACHE_SIZE, 0 turning the SQLite token cache off", () => {
    expect(parseEnv({ ...base, TOKEN_CACHE_SIZE: "0" }).tokenCacheSize).toBe(0);
    expect(parseEnv({ ...base, TOKEN_CACHE_SIZE: "50000" }).tokenCacheSize).toBe(50_000);
  });

  it("reads WORKERS, the number of npm start processes", () => {
    expect(parseEnv({ ...base, WORKERS: "4" }).workers).toBe(4);
    expect(parseEnv({ ...base, WORKERS: " " }).workers).toBe(1);
  });

  it("reads MAX_CONNECTIONS, the open connections of each npm start process (default 10000)", () => {
    expect(parseEnv(base).maxConnections).toBe(10_000);
    expect(parseEnv({ ...base, MAX_CONNECTIONS: "500" }).maxConnections).toBe(500);
  });

  it("reads CLIENT_ID_METADATA (default on) and CLIENT_ID_METADATA_INSECURE_ORIGIN, whatever NODE_ENV says (docs/rules/tokens.md#client-id-metadata-documents)", () => {
    expect(parseEnv(base)).toMatchObject({ clientIdMetadata: true, clientIdMetadataInsecureOrigin: null });
    expect(parseEnv({ ...base, CLIENT_ID_METADATA: "off" }).clientIdMetadata).toBe(false);
    expect(() => parseEnv({ ...base, CLIENT_ID_METADATA: "yes" })).toThrow("Environment variable CLIENT_ID_METADATA must be on or off");
    for (const origin of ["http://127.0.0.1:8123", "http://[::1]:8123", "http://localhost:8123"]) {
      expect(parseEnv({ ...base, CLIENT_ID_METADATA_INSECURE_ORIGIN: origin }).clientIdMetadataInsecureOrigin).toBe(origin);
    }
    for (const origin of ["https://127.0.0.1:8123", "http://10.0.0.1:8123", "http://127.0.0.1", "http://127.0.0.1:8123/", "http://127.0.0.1:8123/docs", "http://example.com:8123", "127.0.0.1:8123"]) {
      expect(() => parseEnv({ ...base, CLIENT_ID_METADATA_INSECURE_ORIGIN: origin }), origin).toThrow(/^Environment variable CLIENT_ID_METADATA_INSECURE_ORIGIN must be an http loopback origin with a port/);
    }
  });

  it("derives APP_URL from PORT and reads PostgreSQL URLs", () => {
    const env = parseEnv({ ...base, PORT: "4000", DATABASE_URL: "postgresql://u:p@db/x" });
    expect(env.appUrl).toBe("http://localhost:4000");
    expect(env.database).toEqual({ kind: "postgresql", url: "postgresql://u:p@db/x" });
  });

  it.each([
    [{ PORT: "eighty" }, /^Environment variable PORT /],
    [{ APP_URL: "not a url" }, /^Environment variable APP_URL must be an absolute http\(s\) URL$/],
    [{ APP_URL: "https://auth.example/path" }, /^Environment variable APP_URL must be an origin/],
    [{ DATABASE_URL: "mysql://x" }, /^Environment variable DATABASE_URL must start with file:/],
    [{ AUTH_SECRET: "short" }, /^Environment variable AUTH_SECRET must be at least 32 characters$/],
    [{ AUTH_SECRET: "" }, /^Environment variable AUTH_SECRET is required in production$/],
    [{ TRUST_PROXY: "yes" }, /^Environment variable TRUST_PROXY must be 0 or 1$/],
    [{ WORKERS: "0" }, /^Environment variable WORKERS must be an integer from 1 to 64$/],
    [{ WORKERS: "two" }, /^Environment variable WORKERS must be an integer from 1 to 64$/],
    [{ WORKERS: "1.5" }, /^Environment variable WORKERS must be an integer from 1 to 64$/],
    [{ TOKEN_CACHE_SIZE: "-1" }, /^Environment variable TOKEN_CACHE_SIZE must be an integer from 0 to 1000000$/],
    [{ TOKEN_CACHE_SIZE: "lots" }, /^Environment variable TOKEN_CACHE_SIZE must be an integer from 0 to 1000000$/],
    [{ MAX_CONNECTIONS: "0" }, /^Environment variable MAX_CONNECTIONS must be an integer from 1 to 1000000$/],
    [{ MAX_CONNECTIONS: "many" }, /^Environment variable MAX_CONNECTIONS must be an integer from 1 to 1000000$/],
  ])("stops with one line naming the variable: %o", (override, message) => {
    let error: unknown;
    try {
      parseEnv({ ...base, ...override });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EnvError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain("\n");
  });

  it("npm start refuses the development database unless ALLOW_DEV_DATABASE=1", () => {
    const production = { NODE_ENV: "production", AUTH_SECRET: "s".repeat(32) } as const;
    expect(productionDatabaseProblem(parseEnv(production))).toMatch(/^Refusing to serve the development database file:\.\/\.data\/dev\.db/);
    expect(productionDatabaseProblem(parseEnv({ ...production, DATABASE_URL: "file:.data/dev.db" }))).toMatch(/ALLOW_DEV_DATABASE=1/);
    expect(productionDatabaseProblem(parseEnv({ ...production, ALLOW_DEV_DATABASE: "1" }))).toBeNull();
    expect(productionDatabaseProblem(parseEnv({ ...production, DATABASE_URL: "file:./.data/prod.db" }))).toBeNull();
    expect(productionDatabaseProblem(parseEnv({ ...production, DATABASE_URL: "postgresql://u:p@db/x" }))).toBeNull();
    expect(() => parseEnv({ ...production, ALLOW_DEV_DATABASE: "yes" })).toThrow("Environment variable ALLOW_DEV_DATABASE must be 0 or 1");
  });
});
