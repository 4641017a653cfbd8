import { describe, expect, it } from "vitest";
import { matchRedirectUri, redirectUriProblem } from "@/clients/redirect-uri";

describe("redirect URI registration", () => {
  it.each(["https://app.example/cb", "https://app.example/cb?x=1", "http://localhost/cb", "http://127.0.0.1:8080/cb", "http://[::1]:9000/"])(
    "accepts %s",
    (uri) => expect(redirectUriProblem(uri)).toBeNull(),
  );

  it.each([
    ["http://app.example/cb", /https/],
    ["myapp://callback", /http or https/],
    ["https://app.example/cb#frag", /fragment/],
    ["/relative", /absolute/],
    ["https://user:pw@app.example/cb", /credentials/],
    ["javascript:alert(1)", /http or https/],
  ])("refuses %s", (uri, problem) => expect(redirectUriProblem(uri)).toMatch(problem));
});

describe("redirect URI matching", () => {
  const registered = ["https://app.example/cb", "http://127.0.0.1:8080/cb"];

  it("matches exactly", () => {
    expect(matchRedirectUri(registered, "https://app.example/cb")).toBe("https://app.example/cb");
    expect(matchRedirectUri(registered, "https://app.example/cb/")).toBeNull();
    expect(matchRedirectUri(registered, "https://APP.example/cb")).toBeNull();
    expect(matchRedirectUri(registered, "https://app.example/cb?x=1")).toBeNull();
    expect(matchRedirectUri(registered, "https://app.example.evil/cb")).toBeNull();
  });

  it("ignores only the port of a loopback URI (RFC 8252 7.3)", () => {
    expect(matchRedirectUri(registered, "http://127.0.0.1:51234/cb")).toBe("http://127.0.0.1:51234/cb");
    expect(matchRedirectUri(registered, "http://127.0.0.1/cb")).toBe("http://127.0.0.1/cb");
    expect(matchRedirectUri(registered, "http://127.0.0.1:51234/other")).toBeNull();
    expect(matchRedirectUri(registered, "http://localhost:8080/cb")).toBeNull();
    expect(matchRedirectUri(["https://app.example:443/cb"], "https://app.example:8443/cb")).toBeNull();
  });
});
