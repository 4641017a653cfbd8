import { expect, type Page } from "@playwright/test";
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
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

const execFileAsync = promisify(execFile);

/** cli() without blocking the event loop, so that several run at once (each CLI start costs a second or two). */
export async function cliAsync<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const { stdout } = await execFileAsync("node_modules/.bin/tsx", ["src/cli/main.ts", ...args, "--json"], {
    env: { ...process.env, ...e2eEnv } as NodeJS.ProcessEnv,
    encoding: "utf8",
  });
  return JSON.parse(stdout) as T;
}

export const PASSWORD = "e2e password 123";

export type User = { id: number; email: string; name: string; password: string };

const freshEmail = () => `e2e-${randomBytes(5).toString("hex")}@example.test`;

export function newUser(name = "E2E User"): User {
  const user = cli<{ id: number; email: string; name: string }>("user:create", "--email", freshEmail(), "--password", PASSWORD, "--name", name);
  return { ...user, password: PASSWORD };
}

/** Several users at once (confirmed, made with the admin CLI), in the order of `names`. */
export async function newUsers<const Names extends readonly string[]>(...names: Names): Promise<{ [K in keyof Names]: User }> {
  const users = await Promise.all(names.map((name) => cliAsync<{ id: number; email: string; name: string }>("user:create", "--email", freshEmail(), "--password", PASSWORD, "--name", name)));
  return users.map((user) => ({ ...user, password: PASSWORD })) as { [K in keyof Names]: User };
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
    // /post?action=URL&name=value... is a client's page that posts name=value... to URL as a form, at once
    // (the authorization endpoint's POST, docs/rules/openid-connect.md#authorization-post).
    if (url.pathname === "/post") {
      const escape = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
      const fields = [...url.searchParams].filter(([name]) => name !== "action").map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`);
      res.end(`<!doctype html><title>Posting</title><form method="post" action="${escape(url.searchParams.get("action") ?? "")}">${fields.join("")}</form><script>document.forms[0].submit()</script>`);
      return;
    }
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
  // goto() follows the redirects and waits for the page: it is the consent page, or the client already.
  // (A race between waiting for the button and for the landing left the losing wait pending, and a later
  // call's consent page then got two clicks: two form posts, the first one aborted.)
  await page.goto(authorizationUrl.toString());
  const approve = page.getByRole("button", { name: "Approve" });
  // Either the consent page (then Approve) or, with consent remembered, the landing page at once. (Racing a
  // click against waitForURL broke when the click's navigation aborted the consent page's own load.)
  await expect.poll(async () => page.url().startsWith(landing) || (await approve.isVisible())).toBe(true);
  if (!page.url().startsWith(landing)) await approve.click();
  await expectAt(page, landing);
  return new URL(page.url());
}

export async function expectAt(page: Page, prefix: string) {
  await expect.poll(() => page.url()).toContain(prefix);
}

/** Signs in through the form and waits until the destination has loaded. */
export async function signInAt(page: Page, user: { email: string; password: string }, path: string) {
  await page.goto(`/login?callbackUrl=${encodeURIComponent(path)}`);
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect.poll(() => new URL(page.url()).pathname).toBe(new URL(path, "http://x").pathname);
}

/** The text of the newest message to `to` whose subject matches, read in the development mailbox as a person would. */
export async function readMailbox(page: Page, to: string, subject: string | RegExp): Promise<string> {
  await page.goto("/dev/mailbox");
  const escaped = to.replace(/[.+]/g, "\\$&");
  const title = typeof subject === "string" ? subject.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : subject.source;
  await page.getByRole("link", { name: new RegExp(`${title}.*to ${escaped}`) }).first().click();
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  return page.locator("pre").innerText();
}

/** The first link to `path` in a mail's text. */
export function linkIn(text: string, path: string): string {
  const link = new RegExp(`https?://\\S+${path.replace(/[/?]/g, "\\$&")}\\S*`).exec(text)?.[0];
  expect(link, text).toBeTruthy();
  return link!;
}
