// LaneRequest (src/server/lane-request.ts): what a handler reads of it is what it would read of
// `new Request(url, { method, headers, body })` made from the same request.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { IncomingHttpHeaders } from "node:http";
import { LaneRequest, requestUrl } from "@/server/lane-request";

const HEADERS: IncomingHttpHeaders = {
  host: "localhost:3000",
  authorization: "Bearer abc",
  "content-type": "application/x-www-form-urlencoded",
  "x-forwarded-for": "10.0.0.1, 127.0.0.1",
  "set-cookie": ["a=1", "b=2"],
};
const pairs = (headers: IncomingHttpHeaders) =>
  Object.entries(headers).flatMap(([name, value]) => (Array.isArray(value) ? value.map((item) => [name, item]) : [[name, value!]]));

const ORIGIN = "http://localhost:3000";

/** What the fast lane gave undici's Request before: the origin and the target as sent, or an absolute target. */
const parsed = (target: string) => new URL(target.startsWith("/") ? ORIGIN + target : target, ORIGIN + "/").href;

/** One request both ways, from the origin and the request target as the fast lane has them. */
function both(method: string, target: string, body: string | null = null) {
  const bytes = body === null ? null : new Uint8Array(Buffer.from(body));
  return {
    ours: new LaneRequest(method, requestUrl(ORIGIN, target), HEADERS, bytes),
    theirs: new Request(parsed(target), { method, headers: pairs(HEADERS) as [string, string][], body: bytes }),
  };
}

describe("LaneRequest", () => {
  it("has the method, the URL as the URL parser writes it and the headers of the equivalent Request", () => {
    for (const target of ["/api/user/1/?a=1&b=%20", "/api/x/../user/%7e1", "//api/health#frag", "/api/%2E%2e/health", "/api/a b", "http://other.test/api/health"]) {
      const { ours, theirs } = both("GET", target);
      expect(ours.method).toBe("GET");
      expect(ours.url).toBe(theirs.url);
      expect([...ours.headers]).toEqual([...theirs.headers]);
      expect(ours.headers.get("set-cookie")).toBe(theirs.headers.get("set-cookie"));
      expect(ours.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    }
    expect(new LaneRequest("delete", "http://x/", {}, null).method).toBe("DELETE");
  });

  it("writes every request target's URL as the URL parser does, parsing only where that could change it", () => {
    const alphabet = [..."aZ09-._~!$&'()*+,;=:@%/?#\\ \"<>`{}|^[]2eE.", "%2e", "%2E", "..", "é", "\t"];
    const target = fc.array(fc.constantFrom(...alphabet), { maxLength: 24 }).map((parts) => "/" + parts.join(""));
    fc.assert(
      fc.property(target, (path) => {
        expect(requestUrl(ORIGIN, path)).toBe(parsed(path));
      }),
      { numRuns: 5000 },
    );
  });

  it("has no body without one, and reads a body it has as the Request would, once", async () => {
    const get = both("GET", "/api/health");
    expect(get.ours.body).toBeNull();
    expect(get.ours.bodyUsed).toBe(false);
    expect(await get.ours.text()).toBe(await get.theirs.text());

    const form = "grant_type=refresh_token&refresh_token=r1";
    let post = both("POST", "/api/connect/oauth2/token/", form);
    expect(Object.fromEntries(await post.ours.formData())).toEqual(Object.fromEntries(await post.theirs.formData()));
    expect(post.ours.bodyUsed).toBe(true);
    await expect(post.ours.text()).rejects.toThrow(TypeError);
    post = both("POST", "/", '{"a":1}');
    const copy = post.ours.clone();
    expect(await post.ours.json()).toEqual({ a: 1 });
    expect(await copy.text()).toBe('{"a":1}');
    post = both("POST", "/", "abc");
    expect(await new Response(post.ours.body).text()).toBe("abc");
    expect(post.ours.bodyUsed).toBe(true);
  });

  it("answers the fetch-only fields and the signal as the Request does", () => {
    const { ours, theirs } = both("GET", "/api/health");
    for (const field of ["cache", "credentials", "destination", "integrity", "keepalive", "mode", "redirect", "referrer", "referrerPolicy"] as const) {
      expect(ours[field], field).toBe(theirs[field]);
    }
    expect(ours.signal.aborted).toBe(false);
    expect(Object.prototype.toString.call(ours)).toBe("[object Request]");
  });
});

describe("LaneHeaders", () => {
  // Header lines as Node parses them: lower-case names, values without surrounding whitespace, set-cookie as a list.
  const name = fc.oneof(fc.constantFrom("authorization", "cookie", "x-forwarded-for", "content-type", "dpop", "origin", "set-cookie"), fc.stringMatching(/^[a-z0-9!#$%&'*+.^_`|~-]{1,8}$/));
  const value = fc.stringMatching(/^[\x20-\x7e\x80-\xff\t]{0,12}$/);
  const lines = fc.dictionary(name, fc.oneof(value, fc.array(value, { minLength: 1, maxLength: 3 })));
  const asked = fc.oneof(name, fc.constantFrom("Authorization", "X-Forwarded-For", "COOKIE", "bad name", "ü", ""));

  it("answers get() and has() for any name as Headers made from the same lines does, before and after it is filled", () => {
    fc.assert(
      fc.property(lines, fc.array(asked, { maxLength: 6 }), (source, names) => {
        const theirs = new Headers(pairs(source) as [string, string][]);
        const ours = new LaneRequest("GET", "http://x/", source, null).headers;
        const answer = (headers: Headers, header: string) => {
          try {
            return [headers.get(header), headers.has(header)];
          } catch (error) {
            return (error as Error).constructor.name;
          }
        };
        for (const header of names) expect(answer(ours, header)).toEqual(answer(theirs, header));
        expect([...ours]).toEqual([...theirs]);
        for (const header of names) expect(answer(ours, header)).toEqual(answer(theirs, header));
      }),
      { numRuns: 3000 },
    );
  });

  it("sees its own changes, and a change before any read keeps the lines Node parsed", () => {
    const headers = new LaneRequest("GET", "http://x/", { authorization: "Bearer a", cookie: "a=1; b=2" }, null).headers;
    headers.set("authorization", "Bearer b");
    headers.append("x-extra", "1");
    expect(headers.get("authorization")).toBe("Bearer b");
    expect(headers.get("cookie")).toBe("a=1; b=2");
    headers.delete("cookie");
    expect(headers.has("cookie")).toBe(false);
    expect([...headers]).toEqual([
      ["authorization", "Bearer b"],
      ["x-extra", "1"],
    ]);
    expect(headers).toBeInstanceOf(Headers);
  });
});
