import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { htmlErrorPage, htmlFailurePage } from "@/http/html";

describe("htmlErrorPage(): the error pages of browser endpoints", () => {
  it("shows the title, the message and, for developers, the error code and the client_id, all escaped", async () => {
    const res = htmlErrorPage(400, "Unknown application", "Go back <now>.", [
      ["Error", "invalid_client"],
      ["client_id", '<script>alert("x")</script>'],
    ]);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    expect(html).toContain("<h1>Unknown application</h1>");
    expect(html).toContain("Go back &lt;now&gt;.");
    expect(html).toContain('<h2 id="dev">For developers</h2>');
    expect(html).toContain("<dt>Error</dt><dd>invalid_client</dd>");
    expect(html).toContain("<dt>client_id</dt><dd>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</dd>");
    expect(html).not.toContain("<script");
  });

  it("allows its one style sheet by hash and nothing else: no script, no framing", async () => {
    const res = htmlErrorPage(400, "Title", "Message");
    const html = await res.text();
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const hash = createHash("sha256").update(style).digest("base64");
    expect(res.headers.get("content-security-policy")).toBe(`default-src 'none'; style-src 'sha256-${hash}'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    // The site's dark mode, and the icons the site's pages link.
    expect(style).toContain("@media (prefers-color-scheme:dark)");
    expect(html).toContain('<link rel="icon" href="/favicon.ico" sizes="32x32">');
  });

  it("shortens long developer facts", async () => {
    const html = await htmlErrorPage(400, "T", "M", [["client_id", "x".repeat(500)]]).text();
    expect(html).toContain(`<dd>${"x".repeat(200)}…</dd>`);
  });

  it("turns a logged failure into a page with its status, error code, request id and Retry-After", async () => {
    const logged = new Response(JSON.stringify({ error: "temporarily_unavailable" }), { status: 503, headers: { "Retry-After": "1", "X-Request-Id": "req-1" } });
    const page = await htmlFailurePage(logged, "Something went wrong", "Try again.");
    expect(page.status).toBe(503);
    expect(page.headers.get("retry-after")).toBe("1");
    const html = await page.text();
    expect(html).toContain("<dt>Error</dt><dd>temporarily_unavailable</dd><dt>Request id</dt><dd>req-1</dd>");
  });
});
