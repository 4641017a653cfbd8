// npm run test:e2e: builds the app (unless --no-build), checks that a Chromium is installed, and runs the
// Playwright suite against the production build. Playwright never downloads a browser here.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const args = process.argv.slice(2);
const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(chromium)) {
  console.error(
    `Chromium is missing (looked for ${chromium}). Install Debian's Chromium with\n` +
      "  sudo apt-get update && sudo apt-get install -y chromium\n" +
      "or point CHROMIUM_PATH at a Chromium or Chrome binary. (`npx playwright install` is not used.)",
  );
  process.exit(1);
}
const run = (command: string, commandArgs: string[]) => {
  const result = spawnSync(command, commandArgs, { stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
const noBuild = args.includes("--no-build");
if (!noBuild) run("npm", ["run", "-s", "build"]); // Next's build and the compiled server (dist/)
run("node_modules/.bin/playwright", ["test", ...args.filter((arg) => arg !== "--no-build")]);
