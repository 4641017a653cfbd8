import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, cspOrigin, newNonce, pageSecurityHeaders } from "@/http/security-headers";

describe("the pages' security headers", () => {
  it("puts the nonce in script-src without 'unsafe-inline', and refuses framing, base and foreign form targets", () => {
    const policy = contentSecurityPolicy({ nonce: "abc", https: false, development: false });
    expect(policy).toBe(
      "default-src 'self'; script-src 'self' 'nonce-abc' 'strict-dynamic'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
  });

  it("lets the consent page load https images (a verified client's logo) and no other page", () => {
    expect(contentSecurityPolicy({ nonce: "n", https: false, development: false, httpsImages: true })).toContain("; img-src 'self' data: https:;");
    expect(contentSecurityPolicy({ nonce: "n", https: false, development: false })).toContain("; img-src 'self' data:;");
  });

  it("names a form's redirect origin (origin only, once), and nothing that is not an http(s) origin", () => {
    const policy = contentSecurityPolicy({
      nonce: "n",
      formTargets: ["https://client.example/cb?x=1", "https://client.example/other", "javascript:alert(1)", "http://127.0.0.1:8000/cb", "not a url"],
      https: false,
      development: false,
    });
    expect(policy).toContain("form-action 'self' https://client.example http://127.0.0.1:8000;");
    expect(cspOrigin("https://a.example;script-src *")).toBeNull();
    expect(cspOrigin("https://a.example/x;script-src *")).toBe("https://a.example");
    expect(cspOrigin("data:text/html,x")).toBeNull();
  });

  it("takes only http and https origins whose host is letters, digits, dots, colons, brackets and hyphens", () => {
    expect(cspOrigin("ftp://a.example")).toBeNull();
    expect(cspOrigin("wss://a.example")).toBeNull();
    expect(cspOrigin("http://a.example:8080/cb")).toBe("http://a.example:8080");
    expect(cspOrigin("https://[::1]:4000/cb")).toBe("https://[::1]:4000");
    // A comma or an underscore anywhere in the host, first or last letter alike, is refused.
    expect(cspOrigin("https://a%2Cb.example")).toBeNull();
    expect(cspOrigin("https://a_b.example")).toBeNull();
    expect(cspOrigin("https://ab.example_")).toBeNull();
  });

  it("sends every page nosniff, a same-origin referrer, no framing and no powerful features", () => {
    for (const https of [false, true]) {
      const headers = new Map(pageSecurityHeaders(https));
      expect(headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(headers.get("Referrer-Policy")).toBe("same-origin");
      expect(headers.get("X-Frame-Options")).toBe("DENY");
      expect(headers.get("Permissions-Policy")).toBe("camera=(), microphone=(), geolocation=(), payment=(), usb=(), browsing-topics=()");
      expect(headers.size).toBe(https ? 5 : 4);
    }
  });

  it("adds upgrade-insecure-requests and Strict-Transport-Security under https only, and 'unsafe-eval' only in development", () => {
    expect(contentSecurityPolicy({ nonce: "n", https: true, development: false })).toMatch(/; upgrade-insecure-requests$/);
    expect(contentSecurityPolicy({ nonce: "n", https: false, development: true })).toContain("'strict-dynamic' 'unsafe-eval'");
    expect(new Map(pageSecurityHeaders(true)).get("Strict-Transport-Security")).toBe("max-age=31536000");
    expect(new Map(pageSecurityHeaders(false)).has("Strict-Transport-Security")).toBe(false);
  });

  it("makes a different 128-bit nonce each time", () => {
    const nonces = new Set(Array.from({ length: 100 }, newNonce));
    expect(nonces.size).toBe(100);
    for (const nonce of nonces) expect(Buffer.from(nonce, "base64")).toHaveLength(16);
  });
});
