import { describe, expect, it } from "vitest";
import { redact } from "@/observability/log";

describe("log redaction", () => {
  it("removes tokens from token paths and secrets from query strings", () => {
    expect(redact("DELETE /api/accesstoken/abcDEF123-_x")).toBe("DELETE /api/accesstoken/[redacted]");
    expect(redact("/api/oauth2token/abc/")).toBe("/api/oauth2token/[redacted]/");
    expect(redact("/api/bundle_permission_request/Zm9vYmFy/")).toBe("/api/bundle_permission_request/[redacted]/");
    expect(redact("/cb?code=abc&state=xyz")).toBe("/cb?code=[redacted]&state=[redacted]");
    expect(redact("/auth?client_id=c&client_secret=s3cret&scope=readonly")).toBe("/auth?client_id=c&client_secret=[redacted]&scope=readonly");
    expect(redact("#access_token=tok&token_type=Bearer")).toBe("#access_token=[redacted]&token_type=Bearer");
  });

  it("keeps numeric ids, which are not secrets", () => {
    expect(redact("/api/bundle_permission_request/42/")).toBe("/api/bundle_permission_request/42/");
  });
});
