// The origin the consent form may post on to (docs/rules/operations.md#security-headers,
// src/http/security-headers.ts): proxy.ts names in the consent page's form-action the redirect URI of the
// sealed request on the page, and only of an intact, unexpired one; a device-flow approval redirects nowhere
// and names nothing.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { openRequest, sealRequest, sealedRedirectUri } from "@/oauth/authorization-request";

afterEach(() => resetClock());

const REDIRECT = "https://client.example.test/callback?from=consent";
const request = {
  clientId: "client-1",
  userId: 7,
  responseType: "code" as const,
  redirectUri: REDIRECT,
  scopes: ["readonly" as const],
  state: "s",
  codeChallenge: null,
};

describe("the consent form's redirect target", () => {
  it("is the redirect URI of an intact sealed request while the request lives, and nothing once it has expired", () => {
    const sealed = sealRequest(request);
    expect(sealedRedirectUri(sealed)).toBe(REDIRECT);
    // Whoever the request belongs to: the page, not the header, checks the user.
    expect(sealedRedirectUri(sealRequest({ ...request, userId: 8, responseType: "token" }))).toBe(REDIRECT);
    const { expiresAt } = openRequest(sealed, request.userId)!;
    advanceClock(expiresAt - nowMs() - 1_000);
    expect(sealedRedirectUri(sealed)).toBe(REDIRECT);
    advanceClock(expiresAt - nowMs());
    expect(sealedRedirectUri(sealed)).toBeNull();
  });

  it("is nothing for a seal that was altered, cut or extended", () => {
    const sealed = sealRequest(request);
    const [body, mac] = sealed.split(".") as [string, string];
    const otherBody = sealRequest({ ...request, redirectUri: "https://evil.example/cb" }).split(".")[0]!;
    expect(sealedRedirectUri(`${otherBody}.${mac}`)).toBeNull();
    expect(sealedRedirectUri(`${body}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`)).toBeNull();
    expect(sealedRedirectUri(`${body}.`)).toBeNull();
    expect(sealedRedirectUri(`.${mac}`)).toBeNull();
    expect(sealedRedirectUri(body)).toBeNull();
    expect(sealedRedirectUri(`${sealed}.${mac}`)).toBeNull();
    expect(sealedRedirectUri("")).toBeNull();
  });

  it("is nothing for a device-flow approval, which redirects nowhere", () => {
    const device = sealRequest({ ...request, responseType: "device_code", redirectUri: "", deviceAuthorizationId: 1, userCode: "BCDF-GHJK" });
    expect(sealedRedirectUri(device)).toBeNull();
  });
});
