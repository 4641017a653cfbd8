import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES, readBody } from "@/http/body";
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

  it("uses the OAuth error code when asked to", async () => {
    const error = await failure(readBody(request("{", "application/json"), { invalidMessage: "invalid_request" }));
    expect(error.error).toBe("invalid_request");
  });
});
