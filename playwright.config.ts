import { defineConfig } from "@playwright/test";
import { rmSync } from "node:fs";

// The e2e suite runs the production build (`next start` through scripts/serve.ts, which migrates first) on
// a fresh SQLite file, in Debian's Chromium (STACK.md: Playwright must not download a browser). Workers
// inherit E2E_DATABASE_URL from the main process, so the file is chosen (and the old ones removed) once.
if (!process.env.E2E_DATABASE_URL) {
  rmSync(".data/e2e", { recursive: true, force: true });
  process.env.E2E_DATABASE_URL = `file:./.data/e2e/e2e-${Date.now()}.db`;
}
const { baseURL, e2eEnv } = await import("./e2e/env");

export default defineConfig({
  testDir: "e2e",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  reporter: [["list"]],
  use: {
    baseURL,
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
    },
  },
  webServer: {
    command: "node --import tsx scripts/serve.ts start",
    url: `${baseURL}/api/ready`,
    env: e2eEnv,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    stderr: "pipe",
  },
});
