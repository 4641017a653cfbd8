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

  it("reads Basic only as the header's scheme, in any case (RFC 7617 2, RFC 9110 11.1): another scheme is no client authentication", () => {
    expect(parseBasic(`basic ${Buffer.from("a:b").toString("base64")}`)).toEqual({ clientId: "a", secret: "b" });
    expect(parseBasic(`BASIC ${Buffer.from("a:b").toString("base64")}`)).toEqual({ clientId: "a", secret: "b" });
    // The word appears, but as another scheme's credentials: the body's credentials decide (readCredentials).
    expect(parseBasic(`Bearer basic ${Buffer.from("a:b").toString("base64")}`)).toBeNull();
  });

  it("splits Basic credentials at the first colon (RFC 7617 2): the id before it may be empty, the secret after it may hold colons", () => {
    expect(parseBasic(basic(":s:e:cret"))).toEqual({ clientId: "", secret: "s:e:cret" });
    expect(parseBasic(basic("id:"))).toEqual({ clientId: "id", secret: "" });
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
