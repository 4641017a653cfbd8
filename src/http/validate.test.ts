import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError, badRequest, conflict, forbidden, gone, methodNotAllowed, notFound, tooManyRequests } from "@/http/errors";
import { htmlErrorPage, redirect } from "@/http/html";
import { parseInput } from "@/http/validate";

function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, error: error.error, headers: error.headers };
    throw error;
  }
  return null;
}

describe("parseInput: one 400 naming the field", () => {
  it("names nested fields with dots and drops zod's 'Invalid input: ' prefix", () => {
    const schema = z.object({ outer: z.object({ inner: z.string() }) });
    expect(refusal(() => parseInput(schema, { outer: { inner: 5 } }))).toEqual({ status: 400, error: "outer.inner: expected string, received number", headers: {} });
  });

  it("answers without a field name when the input itself is wrong", () => {
    expect(refusal(() => parseInput(z.string(), 5))).toEqual({ status: 400, error: "expected string, received number", headers: {} });
  });

  it("returns the parsed value", () => {
    expect(parseInput(z.object({ a: z.coerce.number() }), { a: "3" })).toEqual({ a: 3 });
  });
});

describe("the errors a request can end in", () => {
  it("carry their status, message and headers", () => {
    expect([notFound(), forbidden(), badRequest("b"), conflict("c"), gone("g")].map((e) => [e.status, e.error])).toEqual([
      [404, "not found"],
      [403, "forbidden"],
      [400, "b"],
      [409, "c"],
      [410, "g"],
    ]);
    expect(forbidden("no", { "X-A": "1" }).headers).toEqual({ "X-A": "1" });
    expect(tooManyRequests(0.2).headers).toEqual({ "Retry-After": "1" });
    expect(tooManyRequests(59.1).headers).toEqual({ "Retry-After": "60" });
    const notAllowed = methodNotAllowed(["GET", "OPTIONS"]);
    expect([notAllowed.status, notAllowed.error, notAllowed.headers]).toEqual([405, "method not allowed", { Allow: "GET, OPTIONS" }]);
    expect(notFound() instanceof Error && notFound().message).toBe("not found");
  });
});

describe("HTML answers of browser endpoints", () => {
  it("escape what they show, and can neither be framed, cached nor leak a referrer", async () => {
    const page = htmlErrorPage(400, `<script>"x"</script>`, `a & b's <b>`);
    expect(page.status).toBe(400);
    expect(Object.fromEntries(page.headers)).toEqual({
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": expect.stringMatching(/^default-src 'none'; style-src 'sha256-[^']+'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/),
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
    });
    const html = await page.text();
    expect(html).toContain("<title>&lt;script&gt;&quot;x&quot;&lt;/script&gt; · Bundle permissions</title>");
    expect(html).toContain("<h1>&lt;script&gt;&quot;x&quot;&lt;/script&gt;</h1>");
    expect(html).toContain("<p>a &amp; b&#39;s &lt;b&gt;</p>");
    expect(html).not.toContain("<script>");
  });

  it("redirect without caching or a referrer, with a 302 or a 303 and extra headers", () => {
    const found = redirect("https://client.example/cb?code=x");
    expect([found.status, Object.fromEntries(found.headers)]).toEqual([
      302,
      { location: "https://client.example/cb?code=x", "cache-control": "no-store", pragma: "no-cache", "referrer-policy": "no-referrer" },
    ]);
    const seeOther = redirect("/login", 303, { "X-Extra": "1" });
    expect([seeOther.status, seeOther.headers.get("x-extra"), seeOther.headers.get("location")]).toEqual([303, "1", "/login"]);
  });
});
