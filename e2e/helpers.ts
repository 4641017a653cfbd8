import { expect, type Page } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { e2eEnv } from "./env";

/** Runs the app's admin CLI against the e2e database and returns its JSON output. */
export function cli<T = Record<string, unknown>>(...args: string[]): T {
  const out = execFileSync("node_modules/.bin/tsx", ["src/cli/main.ts", ...args, "--json"], {
    env: { ...process.env, ...e2eEnv } as NodeJS.ProcessEnv,
    encoding: "utf8",
  });
  return JSON.parse(out) as T;
}

export const PASSWORD = "e2e password 123";

export function newUser(name = "E2E User"): { id: number; email: string; name: string; password: string } {
  const email = `e2e-${randomBytes(5).toString("hex")}@example.test`;
  const user = cli<{ id: number; email: string; name: string }>("user:create", "--email", email, "--password", PASSWORD, "--name", name);
  return { ...user, password: PASSWORD };
}

export async function signIn(page: Page, email: string, password = PASSWORD, path = "/login") {
  await page.goto(path);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** The example client's redirect URI, served by a tiny HTTP server of the test (Playwright's request
 * interception does not see the targets of redirects). */
export const CALLBACK = "http://localhost:4999/callback";

export async function startCallbackServer(): Promise<() => Promise<void>> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>Callback</title><p>callback reached</p>");
  });
  await new Promise<void>((resolve) => server.listen(4999, resolve));
  return () => new Promise((resolve) => server.close(() => resolve()));
}

export async function expectAt(page: Page, prefix: string) {
  await expect.poll(() => page.url()).toContain(prefix);
}
