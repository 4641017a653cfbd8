// /docs for a deployed server (docs/rules/pages.md#developer-page): every endpoint of the discovery metadata is
// listed with its full URL, and the examples use the deployment's own addresses (on http and on https), never
// a file of the repository.
import { describe, expect, it } from "vitest";
import { openidConfiguration } from "@/oidc/discovery";
import { endpointsOf, examplesFor } from "./developer-guide";

const local = openidConfiguration();
const deployed = JSON.parse(JSON.stringify(local).replaceAll(local.issuer, "https://id.example.com")) as typeof local;

describe("the developer page", () => {
  it.each([
    ["http://localhost:3000", local],
    ["https://id.example.com", deployed],
  ])("on %s: every endpoint of the metadata, with its full URL", (issuer, meta) => {
    const endpoints = endpointsOf(meta);
    const addresses = Object.entries(meta).filter(([field, value]) => typeof value === "string" && (field.endsWith("_endpoint") || field === "jwks_uri"));
    expect(addresses.length).toBeGreaterThanOrEqual(9);
    for (const [field, url] of addresses) expect(endpoints).toContainEqual(expect.objectContaining({ field, url }));
    for (const endpoint of endpoints) expect(endpoint.url.startsWith(`${issuer}/`)).toBe(true);
  });

  it("examples: curl, openid-client, oauth4webapi and an MCP client, with the server's own URLs and no README", () => {
    for (const meta of [local, deployed]) {
      const examples = examplesFor(meta);
      expect(examples.map((example) => example.id)).toEqual(["curl", "openid-client", "oauth4webapi", "mcp"]);
      const text = examples.map((example) => `${example.intro}\n${example.code}`).join("\n");
      expect(text).not.toMatch(/readme|docs\/|\.md\b/i);
      expect(text).toContain(meta.token_endpoint);
      expect(text).toContain(`${meta.issuer}/api/mcp`);
      // Every absolute URL is the server's own, or the app's own callback on the loopback address.
      for (const url of text.match(/https?:\/\/[^\s"'`)<>]+/g) ?? []) {
        expect(url.startsWith(`${meta.issuer}/`) || url === meta.issuer || /^http:\/\/(localhost|127\.0\.0\.1):8000\//.test(url), url).toBe(true);
      }
    }
    // Libraries are told to accept plain http only where the issuer is http.
    expect(examplesFor(local).map((example) => example.code).join("\n")).toContain("allowInsecureRequests");
    expect(examplesFor(deployed).map((example) => example.code).join("\n")).not.toContain("allowInsecureRequests");
  });
});
