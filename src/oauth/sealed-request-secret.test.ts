// The seal of an authorization request and the consent form's CSRF token derive their key from AUTH_SECRET
// (src/oauth/authorization-request.ts): a new secret voids every consent form made under the old one, and
// forms made under the new secret work at once.
import { afterEach, describe, expect, it } from "vitest";
import { env, setEnvForTests } from "@/env";
import { consentCsrfToken, csrfTokenMatches, openRequest, sealRequest, sealedRedirectUri } from "@/oauth/authorization-request";

const original = env().authSecret;
afterEach(() => {
  setEnvForTests({ authSecret: original });
});

const request = {
  clientId: "client-1",
  userId: 7,
  responseType: "code" as const,
  redirectUri: "https://client.example.test/callback",
  scopes: ["readonly" as const],
  state: "s",
  codeChallenge: null,
};

describe("a new AUTH_SECRET", () => {
  it("voids the sealed requests and CSRF tokens made under the old one, and seals anew under itself", () => {
    const old = sealRequest(request);
    const oldCsrf = consentCsrfToken(request.userId, old);
    expect(openRequest(old, request.userId)).toMatchObject(request);

    setEnvForTests({ authSecret: "another-secret-another-secret-0123456789" });
    expect(openRequest(old, request.userId)).toBeNull();
    expect(sealedRedirectUri(old)).toBeNull();
    expect(csrfTokenMatches(request.userId, old, oldCsrf)).toBe(false);
    const fresh = sealRequest(request);
    expect(openRequest(fresh, request.userId)).toMatchObject(request);
    expect(csrfTokenMatches(request.userId, fresh, consentCsrfToken(request.userId, fresh))).toBe(true);

    // And back: what the second secret sealed does not open under the first.
    setEnvForTests({ authSecret: original });
    expect(openRequest(fresh, request.userId)).toBeNull();
    expect(openRequest(sealRequest(request), request.userId)).toMatchObject(request);
  });
});
