import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The tests' database: TEST_DATABASE_URL (PostgreSQL in CI), else a fresh SQLite file for this run.
// DATABASE_URL is never used, so that `npm test` cannot touch a developer's own database.
const databaseUrl = process.env.TEST_DATABASE_URL || `file:./.data/test/run-${process.pid}.db`;
process.env.DATABASE_URL = databaseUrl;

export default defineConfig({
  resolve: {
    alias: {
      "@/": fileURLToPath(new URL("./src/", import.meta.url)),
      "@emails/": fileURLToPath(new URL("./emails/", import.meta.url)),
    },
  },
  test: {
    include: ["src/**/*.test.ts", "app/**/*.test.ts", "scripts/**/*.test.ts"],
    globalSetup: ["src/testing/global-setup.ts"],
    // Does nothing except under Stryker (see the file).
    setupFiles: ["src/testing/stryker-preload.ts"],
    env: {
      NODE_ENV: "test",
      DATABASE_URL: databaseUrl,
      AUTH_SECRET: "test-secret-test-secret-test-secret-0123",
      APP_URL: "http://localhost:3000",
      LOG_LEVEL: "silent",
      RESEND_API_KEY: "",
    },
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
