import { describe, expect, it } from "vitest";
import { challengeProblem, s256, verifierMatches } from "@/oauth/pkce";

// RFC 7636 Appendix B: the example verifier and its S256 challenge.
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

describe("PKCE S256 (RFC 7636 4.2, 4.6)", () => {
  it("derives the challenge as BASE64URL(SHA256(ASCII(verifier))), as in the RFC's example", () => {
    expect(s256(VERIFIER)).toBe(CHALLENGE);
    expect(challengeProblem(CHALLENGE, "S256")).toBeNull();
  });

  it("matches a verifier only with its own challenge: false, never an exception, for any other value or length", () => {
    expect(verifierMatches(VERIFIER, CHALLENGE)).toBe(true);
    expect(verifierMatches(VERIFIER, CHALLENGE.slice(0, -1))).toBe(false);
    expect(verifierMatches(VERIFIER, `${CHALLENGE}A`)).toBe(false);
    expect(verifierMatches(VERIFIER, "")).toBe(false);
    expect(verifierMatches(VERIFIER, `${CHALLENGE.slice(0, -1)}A`)).toBe(false);
    expect(verifierMatches(`${VERIFIER}x`, CHALLENGE)).toBe(false);
  });
});
