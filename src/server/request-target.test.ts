// The request-target screen (src/server/request-target.ts) as a property: whatever it lets through, the WHATWG
// URL parser (Next's, after its own repeated-slash redirect) reads as the very path the fast lane routes on, so that no target can mean one path to
// the lane and another to Next; and every target holding a dot segment, in any spelling, is refused.
import type { IncomingMessage } from "node:http";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeUnreserved, screenTarget } from "@/server/request-target";

const APP_HOST = "localhost:3000";

function screened(url: string, host = "x") {
  const req = { url, headers: { host } } as unknown as IncomingMessage;
  const refusal = screenTarget(req, APP_HOST);
  return { refusal, url: req.url!, host: req.headers.host };
}

const piece = fc.constantFrom("api", "auth", "user", "1", ".well-known", "a.b", "..x", ".", "..", "%2e", "%2E", "%2e%2E", ".%2e", "%61pi", "%2f", "%5c", "\\", "#", "~", "%7E", "%20", "");
const path = fc.array(piece, { minLength: 1, maxLength: 6 }).map((pieces) => "/" + pieces.join("/"));
const query = fc.constantFrom("", "?a=1", "?next=/../x", "?%2e%2e");

describe("screenTarget", () => {
  it("passes only paths that the URL parser reads unchanged, and refuses every dot segment", () => {
    fc.assert(
      fc.property(path, query, (p, q) => {
        const { refusal, url } = screened(p + q);
        const decoded = decodeUnreserved(p);
        const dotted = decoded.split("/").some((segment) => segment === "." || segment === "..");
        if (dotted) expect(refusal).not.toBeNull();
        if (refusal) return;
        const routed = url.split("?")[0]!;
        expect(url.slice(routed.length)).toBe(q);
        // Next first answers a path with repeated slashes with a redirect to the path without them; what it
        // routes on is that path as the URL parser reads it.
        const single = routed.replace(/\/\/+/g, "/");
        expect(new URL(single, "http://localhost:3000").pathname).toBe(single);
      }),
    );
  });

  it("rewrites an absolute-form target with APP_URL's authority to its origin form, and sets Host", () => {
    expect(screened("http://localhost:3000/api/user/1?x=1")).toEqual({ refusal: null, url: "/api/user/1?x=1", host: "localhost:3000" });
    expect(screened("http://LocalHost:3000?x=1")).toEqual({ refusal: null, url: "/?x=1", host: "LocalHost:3000" });
    expect(screened("http://other.example/api/user/1").refusal).toEqual({ status: 400, error: "request target names another host" });
    expect(screened("/%61pi/%7Euser").url).toBe("/api/~user");
    expect(screened("/api/user/%2F1").url).toBe("/api/user/%2F1"); // reserved characters stay encoded
  });
});
