import { defineConfig } from "@playwright/test";
import { rmSync } from "node:fs";
import { startArguments, startEnvironment } from "./scripts/start-command";

// The e2e suite runs the production build (`node dist/server.js start`, which migrates first) on
// a fresh SQLite file, in Debian's Chromium (Playwright downloads no browser here). Workers inherit
// E2E_DATABASE_URL from the main process, so the file is chosen (and the old ones removed) once.
if (!process.env.E2E_DATABASE_URL) {
  rmSync(".data/e2e", { recursive: true, force: true });
  process.env.E2E_DATABASE_URL = `file:./.data/e2e/e2e-${Date.now()}.db`;
  // Screenshots of every page, written afresh by each run for a reviewer to look at (not compared).
  rmSync("e2e-screenshots", { recursive: true, force: true });
}
const { baseURL, e2eEnv } = await import("./e2e/env");

const chromium = {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
};

// The pages a person uses (e2e/pages-*.spec.ts) run at two sizes, a desktop and a phone; the protocol specs
// (interop, OAuth flows, device, OpenID Connect, security) at the desktop size only.
const PAGE_SPECS = /pages-.*\.spec\.ts$/;

export default defineConfig({
  testDir: "e2e",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 90_000,
  reporter: [["list"]],
  use: {
    baseURL,
    trace: "retain-on-failure",
    launchOptions: chromium,
  },
  projects: [
    { name: "desktop", use: { viewport: { width: 1280, height: 800 } } },
    { name: "phone", testMatch: PAGE_SPECS, use: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } },
  ],
  webServer: {
    command: ["node", ...startArguments()].join(" "), // the compiled server (npm run build), as production runs it
    url: `${baseURL}/api/ready`,
    env: { ...startEnvironment(), ...e2eEnv },
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    stderr: "pipe",
  },
});
