import { expect, type Page } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { callbackPort, e2eEnv } from "./env";

// Node's fetch (undici) keeps idle connections to reuse them, and drops them on its own timer before the
// server's keep-alive (5 s) runs out. cli() below blocks the event loop (execFileSync) for seconds, so that
// timer cannot run: the server closes the idle socket first, and the next fetch of an OAuth library was
// sent on the dead connection ("SocketError: other side closed"). Letting the event loop run its timers and
// read its sockets before each request lets undici see the close and open a fresh connection.
const nodeFetch = globalThis.fetch;
globalThis.fetch = async (...args: Parameters<typeof fetch>) => {
  await new Promise((resolve) => setTimeout(resolve, 20));
  return nodeFetch(...args);
};

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
export const CALLBACK = `http://localhost:${callbackPort}/callback`;

export async function startCallbackServer(): Promise<() => Promise<void>> {
  const server = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    // /spa is a browser-only client: it reads the implicit response from its fragment, keeps it in memory
    // and removes it from the address bar, as single-page apps do.
    const spa = req.url?.startsWith("/spa")
      ? "<script>window.implicitResult = Object.fromEntries(new URLSearchParams(location.hash.slice(1)));" +
        "history.replaceState(null, '', location.pathname + location.search);</script>"
      : "";
    // /frame?src=URL is a page of another origin that puts URL in a frame (the framing tests).
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname === "/frame") {
      const src = (url.searchParams.get("src") ?? "").replace(/"/g, "&quot;");
      res.end(`<!doctype html><title>Framer</title><iframe id="framed" src="${src}" onload="window.framedLoaded = true"></iframe>`);
      return;
    }
    res.end(`<!doctype html><title>Callback</title><p>callback reached</p>${spa}`);
  });
  await new Promise<void>((resolve) => server.listen(callbackPort, resolve));
  return () => new Promise((resolve) => server.close(() => resolve()));
}

/** Opens an authorization URL as the signed-in user, approves if asked, and returns where the browser lands. */
export async function approveInBrowser(page: Page, authorizationUrl: string | URL, landing = CALLBACK): Promise<URL> {
  await page.goto(authorizationUrl.toString());
  const approve = page.getByRole("button", { name: "Approve" });
  await Promise.race([approve.waitFor().then(() => approve.click()), page.waitForURL((url) => url.href.startsWith(landing))]);
  await expectAt(page, landing);
  return new URL(page.url());
}

export async function expectAt(page: Page, prefix: string) {
  await expect.poll(() => page.url()).toContain(prefix);
}
