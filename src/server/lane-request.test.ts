// LaneRequest (src/server/lane-request.ts): what a handler reads of it is what it would read of
// `new Request(url, { method, headers, body })` made from the same request.
import { describe, expect, it } from "vitest";
import type { IncomingHttpHeaders } from "node:http";
import { LaneRequest } from "@/server/lane-request";

const HEADERS: IncomingHttpHeaders = {
  host: "localhost:3000",
  authorization: "Bearer abc",
  "content-type": "application/x-www-form-urlencoded",
  "x-forwarded-for": "10.0.0.1, 127.0.0.1",
  "set-cookie": ["a=1", "b=2"],
};
const pairs = (headers: IncomingHttpHeaders) =>
  Object.entries(headers).flatMap(([name, value]) => (Array.isArray(value) ? value.map((item) => [name, item]) : [[name, value!]]));

function both(method: string, url: string, body: string | null = null) {
  const bytes = body === null ? null : new Uint8Array(Buffer.from(body));
  return {
    ours: new LaneRequest(method, url, HEADERS, bytes),
    theirs: new Request(url, { method, headers: pairs(HEADERS) as [string, string][], body: bytes }),
  };
}

describe("LaneRequest", () => {
  it("has the method, the URL as the URL parser writes it and the headers of the equivalent Request", () => {
    for (const url of ["http://localhost:3000/api/user/1/?a=1&b=%20", "http://localhost:3000/api/x/../user/%7e1", "http://localhost:3000//api/health#frag"]) {
      const { ours, theirs } = both("GET", url);
      expect(ours.method).toBe("GET");
      expect(ours.url).toBe(theirs.url);
      expect([...ours.headers]).toEqual([...theirs.headers]);
      expect(ours.headers.get("set-cookie")).toBe(theirs.headers.get("set-cookie"));
      expect(ours.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    }
    expect(new LaneRequest("delete", "http://x/", {}, null).method).toBe("DELETE");
  });

  it("has no body without one, and reads a body it has as the Request would, once", async () => {
    const get = both("GET", "http://localhost:3000/api/health");
    expect(get.ours.body).toBeNull();
    expect(get.ours.bodyUsed).toBe(false);
    expect(await get.ours.text()).toBe(await get.theirs.text());

    const form = "grant_type=refresh_token&refresh_token=r1";
    let post = both("POST", "http://localhost:3000/api/connect/oauth2/token/", form);
    expect(Object.fromEntries(await post.ours.formData())).toEqual(Object.fromEntries(await post.theirs.formData()));
    expect(post.ours.bodyUsed).toBe(true);
    await expect(post.ours.text()).rejects.toThrow(TypeError);
    post = both("POST", "http://localhost:3000/", '{"a":1}');
    const copy = post.ours.clone();
    expect(await post.ours.json()).toEqual({ a: 1 });
    expect(await copy.text()).toBe('{"a":1}');
    post = both("POST", "http://localhost:3000/", "abc");
    expect(await new Response(post.ours.body).text()).toBe("abc");
    expect(post.ours.bodyUsed).toBe(true);
  });

  it("answers the fetch-only fields and the signal as the Request does", () => {
    const { ours, theirs } = both("GET", "http://localhost:3000/api/health");
    for (const field of ["cache", "credentials", "destination", "integrity", "keepalive", "mode", "redirect", "referrer", "referrerPolicy"] as const) {
      expect(ours[field], field).toBe(theirs[field]);
    }
    expect(ours.signal.aborted).toBe(false);
    expect(Object.prototype.toString.call(ours)).toBe("[object Request]");
  });
});
