import { describe, expect, it } from "vitest";
import { parseBasic, readCredentials } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";

const basic = (value: string) => `Basic ${Buffer.from(value).toString("base64")}`;

describe("client credentials", () => {
  it("form-url-decodes both parts of Basic credentials (RFC 6749 2.3.1)", () => {
    expect(parseBasic(basic("my%20client:p%3Ass+word"))).toEqual({ clientId: "my client", secret: "p:ss word" });
    expect(parseBasic(null)).toBeNull();
    expect(parseBasic("Bearer abc")).toBeNull();
  });

  it("refuses Basic credentials without a colon as invalid_client", () => {
    expect(() => parseBasic(basic("nocolon"))).toThrow(OAuthError);
  });

  it("refuses credentials in Basic and the body at once", () => {
    const request = new Request("http://x", { headers: { authorization: basic("a:b") } });
    expect(() => readCredentials(request, { client_secret: "b" })).toThrow(/invalid_request/);
    expect(() => readCredentials(request, { client_id: "other" })).toThrow(/invalid_request/);
    expect(readCredentials(request, { client_id: "a" })).toEqual({ clientId: "a", secret: "b", method: "basic" });
  });

  it("reads body credentials, and a bare client_id for public clients", () => {
    const request = new Request("http://x");
    expect(readCredentials(request, { client_id: "a", client_secret: "s" })).toEqual({ clientId: "a", secret: "s", method: "body" });
    expect(readCredentials(request, { client_id: "a" })).toEqual({ clientId: "a", secret: undefined, method: "none" });
    expect(() => readCredentials(request, {})).toThrow(/invalid_client/);
  });
});
