// Return addresses after sign-in and sign-up (docs/rules/accounts.md#return-addresses). APP_URL is
// http://localhost:3000 in the tests (vitest.config.ts).
import { describe, expect, it } from "vitest";
import { safeCallbackUrl } from "@/auth/callback-url";

describe("safeCallbackUrl()", () => {
  it.each([
    ["/consent?request=abc", "/consent?request=abc"],
    ["/api/connect/oauth2/auth/?state=x&redirect_uri=https%3A%2F%2Fclient.example%2Fcb", "/api/connect/oauth2/auth/?state=x&redirect_uri=https%3A%2F%2Fclient.example%2Fcb"],
    ["/redeem?token=abc_DEF-1", "/redeem?token=abc_DEF-1"],
    ["/settings/sharing#top", "/settings/sharing"],
    ["http://localhost:3000/settings/apps?x=1", "/settings/apps?x=1"],
    ["HTTP://LOCALHOST:3000/settings", "/settings"],
    ["settings/apps", "/settings/apps"],
    // Same scheme as APP_URL without slashes: a relative path to browsers too, so it stays on this site.
    ["http:evil.example", "/evil.example"],
  ])("keeps %j on this site as %j (path and query only)", (value, expected) => {
    expect(safeCallbackUrl(value)).toBe(expected);
  });

  it.each([
    // The review's finding: a tab (sent as %09 and decoded once by the query parser) is dropped by browsers,
    // which then see //evil.example, a protocol-relative URL.
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r/evil.example",
    "\t//evil.example",
    "/\u0000/evil.example",
    "/\u007f/evil.example",
    "//evil.example/",
    "///evil.example/",
    "/\\evil.example",
    "\\\\evil.example",
    "/x\\..\\..\\/evil.example",
    "https:evil.example",
    "https:/evil.example",
    "https://evil.example/",
    "HTTPS://evil.example/",
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "/.//evil.example",
    "/a/..//evil.example",
    "/%2F/evil.example",
    "/%2f%2fevil.example",
    "/%5Cevil.example",
    "/%5c%5cevil.example",
    "http://user@localhost:3000/settings",
    "http://user:pw@localhost:3000/settings",
    "http://localhost:3000@evil.example/",
    "http://localhost:3001/settings",
    "https://localhost:3000/settings",
    "http://127.0.0.1:3000/settings",
    "",
    " ",
    undefined,
    null,
    42,
    ["/settings"],
  ])("sends %j to / instead", (value) => {
    expect(safeCallbackUrl(value)).toBe("/");
  });
});
