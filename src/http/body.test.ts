import { describe, expect, it } from "vitest";
import { bodyReadAlready, MAX_BODY_BYTES, readBody } from "@/http/body";
import { ApiError } from "@/http/errors";

const request = (body: string, type?: string, headers: Record<string, string> = {}) =>
  new Request("http://x/api", { method: "POST", body, headers: { ...(type ? { "content-type": type } : {}), ...headers } });

async function failure(promise: Promise<unknown>) {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("readBody", () => {
  it("reads JSON, text/plain JSON, and form bodies where allowed", async () => {
    expect(await readBody(request('{"a":1}', "application/json; charset=utf-8"))).toEqual({ a: 1 });
    expect(await readBody(request('{"a":"b"}', "text/plain;charset=UTF-8"))).toEqual({ a: "b" });
    expect(await readBody(request("a=b+c&d=%2F", "application/x-www-form-urlencoded"), { form: true })).toEqual({ a: "b c", d: "/" });
  });

  it("refuses a form body where only JSON is taken, with 415", async () => {
    const error = await failure(readBody(request("a=b", "application/x-www-form-urlencoded")));
    expect(error.status).toBe(415);
    expect(error.error).toMatch(/application\/json/);
  });

  it("refuses malformed JSON and non-objects with 400 naming the body", async () => {
    expect((await failure(readBody(request("{", "application/json")))).error).toBe("body: malformed JSON");
    expect((await failure(readBody(request("[]", "application/json")))).status).toBe(400);
    expect((await failure(readBody(request("null", "application/json")))).status).toBe(400);
  });

  it("refuses bodies over 64 KiB with 413, whether or not the length is declared", async () => {
    const big = JSON.stringify({ a: "x".repeat(MAX_BODY_BYTES) });
    expect((await failure(readBody(request(big, "application/json")))).status).toBe(413);
    const streamed = new Request("http://x/api", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 80; i++) controller.enqueue(new TextEncoder().encode("x".repeat(1024)));
          controller.close();
        },
      }),
      // @ts-expect-error Node's fetch needs duplex for streamed bodies.
      duplex: "half",
    });
    expect((await failure(readBody(streamed))).status).toBe(413);
  });

  it("allows an empty body only when asked to", async () => {
    expect(await readBody(request("", "application/json"), { allowEmpty: true })).toEqual({});
    expect((await failure(readBody(request("", "application/json")))).status).toBe(400);
  });

  it("reads a body of white space alone as empty", async () => {
    expect(await readBody(request(" \r\n\t", "application/json"), { allowEmpty: true })).toEqual({});
    const refused = await failure(readBody(request(" \n", "application/json")));
    expect({ status: refused.status, error: refused.error }).toEqual({ status: 400, error: "body: must be a JSON object" });
  });

  it("stops an upload past 64 KiB: the rest of the stream is cancelled, not read", async () => {
    let sent = 0;
    let cancelled = false;
    const endless = new Request("http://x/api", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        pull(controller) {
          sent += 1024;
          controller.enqueue(new TextEncoder().encode("x".repeat(1024)));
        },
        cancel() {
          cancelled = true;
        },
      }),
      // @ts-expect-error Node's fetch needs duplex for streamed bodies.
      duplex: "half",
    });
    const error = await failure(readBody(endless));
    expect({ status: error.status, error: error.error, cancelled }).toEqual({ status: 413, error: "body: larger than 64 KiB", cancelled: true });
    expect(sent).toBeLessThan(MAX_BODY_BYTES + 64 * 1024);
  });

  it("uses the OAuth error code when asked to", async () => {
    const error = await failure(readBody(request("{", "application/json"), { invalidMessage: "invalid_request" }));
    expect(error.error).toBe("invalid_request");
  });

  it("takes a body of exactly 64 KiB, declared or not, and names the limit when refusing a larger one", async () => {
    const exact = JSON.stringify({ a: "x".repeat(MAX_BODY_BYTES - 8) });
    expect(exact.length).toBe(MAX_BODY_BYTES);
    expect(await readBody(request(exact, "application/json", { "content-length": String(MAX_BODY_BYTES) }))).toEqual({ a: "x".repeat(MAX_BODY_BYTES - 8) });
    const declared = await failure(readBody(request("{}", "application/json", { "content-length": String(MAX_BODY_BYTES + 1) })));
    expect({ status: declared.status, error: declared.error }).toEqual({ status: 413, error: "body: larger than 64 KiB" });
    const oauth = await failure(readBody(request("{}", "application/json", { "content-length": String(MAX_BODY_BYTES + 1) }), { invalidMessage: "invalid_request" }));
    expect({ status: oauth.status, error: oauth.error }).toEqual({ status: 413, error: "invalid_request" });
  });

  it("reads a request without any body as empty", async () => {
    const bodiless = new Request("http://x/api", { method: "POST", headers: { "content-type": "application/json" } });
    expect(await readBody(bodiless, { allowEmpty: true })).toEqual({});
    const refused = await failure(readBody(new Request("http://x/api", { method: "POST" })));
    expect({ status: refused.status, error: refused.error }).toEqual({ status: 400, error: "body: must be a JSON object" });
  });

  it("refuses bytes that are not UTF-8 with 400", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    const raw = (options = {}) => readBody(new Request("http://x/api", { method: "POST", headers: { "content-type": "application/json" }, body: bytes }), options);
    const plain = await failure(raw());
    expect({ status: plain.status, error: plain.error }).toEqual({ status: 400, error: "body: not valid UTF-8" });
    const oauth = await failure(raw({ invalidMessage: "invalid_request" }));
    expect({ status: oauth.status, error: oauth.error }).toEqual({ status: 400, error: "invalid_request" });
  });

  it("reads JSON without a content type, except where forms are taken, and names the type it refuses", async () => {
    // A string body gets text/plain from the Request constructor; bytes get no content type at all.
    const untyped = () => new Request("http://x/api", { method: "POST", body: new TextEncoder().encode('{"a":1}') });
    expect(untyped().headers.get("content-type")).toBeNull();
    expect(await readBody(untyped())).toEqual({ a: 1 });
    const formless = await failure(readBody(untyped(), { form: true }));
    expect({ status: formless.status, error: formless.error }).toEqual({ status: 415, error: "content type (none) is not supported; send application/json" });
    const xml = await failure(readBody(request("<a/>", "Application/XML; charset=utf-8")));
    expect({ status: xml.status, error: xml.error }).toEqual({ status: 415, error: "content type application/xml is not supported; send application/json" });
    expect(await readBody(request('{"a":2}', " Application/JSON ; charset=utf-8"))).toEqual({ a: 2 });
    const oauth = await failure(readBody(request("<a/>", "application/xml"), { form: true, invalidMessage: "invalid_request" }));
    expect({ status: oauth.status, error: oauth.error }).toEqual({ status: 415, error: "invalid_request" });
  });

  it("takes the bytes the fast lane has read from the socket, under the same 64 KiB and UTF-8 rules", async () => {
    // The fast lane (src/server/fast-lane.ts) reads the body itself, chunked or not, and hands the bytes over.
    const laneRequest = (bytes: Uint8Array) => {
      const request = new Request("http://x/api", { method: "POST", headers: { "content-type": "application/json" } });
      bodyReadAlready(request, bytes);
      return request;
    };
    const exact = JSON.stringify({ a: "x".repeat(MAX_BODY_BYTES - 8) });
    expect(await readBody(laneRequest(new TextEncoder().encode(exact)))).toEqual({ a: "x".repeat(MAX_BODY_BYTES - 8) });
    const over = await failure(readBody(laneRequest(new TextEncoder().encode(exact + " "))));
    expect({ status: over.status, error: over.error }).toEqual({ status: 413, error: "body: larger than 64 KiB" });
    const overOauth = await failure(readBody(laneRequest(new TextEncoder().encode(exact + " ")), { invalidMessage: "invalid_request" }));
    expect({ status: overOauth.status, error: overOauth.error }).toEqual({ status: 413, error: "invalid_request" });
    const notUtf8 = await failure(readBody(laneRequest(new Uint8Array([0x7b, 0xff, 0x7d]))));
    expect({ status: notUtf8.status, error: notUtf8.error }).toEqual({ status: 400, error: "body: not valid UTF-8" });
  });

  it("refuses a repeated form parameter, and malformed JSON on OAuth endpoints, with the OAuth code", async () => {
    const repeated = await failure(readBody(request("a=1&a=2", "application/x-www-form-urlencoded"), { form: true, invalidMessage: "invalid_request" }));
    expect({ status: repeated.status, error: repeated.error }).toEqual({ status: 400, error: "invalid_request" });
    const malformed = await failure(readBody(request("{", "application/json"), { form: true, invalidMessage: "invalid_request" }));
    expect({ status: malformed.status, error: malformed.error }).toEqual({ status: 400, error: "invalid_request" });
    const array = await failure(readBody(request("[1]", "text/plain")));
    expect({ status: array.status, error: array.error }).toEqual({ status: 400, error: "body: must be a JSON object" });
  });

  it("takes form parameters named like Object's own members as parameters, not repeats", async () => {
    const body = await readBody(request("constructor=a&valueOf=b&toString=c&__proto__=d", "application/x-www-form-urlencoded"), { form: true });
    expect(Object.entries(body)).toEqual([["constructor", "a"], ["valueOf", "b"], ["toString", "c"], ["__proto__", "d"]]);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
  });

  it("refuses a parameter, or a JSON string value or key at any depth, holding a control character: a 400 naming it", async () => {
    const cases: Array<[body: string, type: string, field: string]> = [
      ["client_id=a%00b", "application/x-www-form-urlencoded", "client_id"],
      ["a%01=1", "application/x-www-form-urlencoded", "a\\u0001"],
      ['{"a":{"b":[1,"x\\u007f"]}}', "application/json", "a.b.1"],
      ['{"a":{"k\\u001f":"v"}}', "text/plain", "a.k\\u001f"],
      ['{"name":"line\\nbreak"}', "application/json", "name"],
    ];
    for (const [body, type, field] of cases) {
      const refused = await failure(readBody(request(body, type), { form: true }));
      expect({ status: refused.status, error: refused.error }).toEqual({ status: 400, error: `${field}: must not contain control characters` });
      const oauth = await failure(readBody(request(body, type), { form: true, invalidMessage: "invalid_client_metadata" }));
      expect({ status: oauth.status, error: oauth.error }).toEqual({ status: 400, error: "invalid_client_metadata" });
    }
    // Other characters are the endpoints' to judge: bidi, zero-width, line separators, a lone surrogate.
    expect(await readBody(request('{"a":"\\u202e\\u200b\\u2028\\ud800 é"}', "application/json"))).toEqual({ a: "\u202e\u200b\u2028\ud800 é" });
  });
});
