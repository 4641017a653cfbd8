// RFC 8707 2 and RFC 9728 2 (docs/rules/tokens.md#resource-indicators,
// docs/rules/tokens.md#protected-resource-metadata): which audience a request's `resource` values name, what
// a stored audience reads back as, and what each resource's metadata document calls itself.
import { describe, expect, it } from "vitest";
import { env } from "@/env";
import { OAuthError } from "@/oauth/errors";
import {
  API_AUDIENCE,
  MCP_AUDIENCE,
  apiResource,
  checkResources,
  protectedResourceMetadata,
  requestedAudience,
  resourceMetadataUrl,
  storedAudience,
} from "@/oauth/resource";

const api = () => `${env().appUrl}/api`;
const mcp = () => `${env().appUrl}/api/mcp`;

/** The OAuth error code `run` throws, or null when it returns. */
function refusal(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (error) {
    if (error instanceof OAuthError) return error.code;
    throw error;
  }
}

describe("the resource a request names (RFC 8707 2)", () => {
  it("names none when there is no value, or only empty ones (a form field left blank)", () => {
    expect(requestedAudience([])).toBeNull();
    expect(requestedAudience([undefined, null, ""])).toBeNull();
    expect(refusal(() => checkResources(["", undefined]))).toBeNull();
  });

  it("is the API or the MCP server by its exact identifier, the same one repeated, or an empty value beside it", () => {
    expect(requestedAudience([api()])).toBe(API_AUDIENCE);
    expect(requestedAudience([mcp()])).toBe(MCP_AUDIENCE);
    expect(requestedAudience([mcp(), mcp()])).toBe(MCP_AUDIENCE);
    expect(requestedAudience(["", api()])).toBe(API_AUDIENCE);
    expect(apiResource()).toBe(api());
  });

  it("refuses anything else as invalid_target: another server, a near miss, a non-string, both resources at once", () => {
    for (const values of [["https://elsewhere.example/api"], [`${api()}/`], [`${api()}#top`], [api().toUpperCase()], [42]]) {
      expect(refusal(() => requestedAudience(values))).toBe("invalid_target");
      expect(refusal(() => checkResources(values))).toBe("invalid_target");
    }
    expect(refusal(() => requestedAudience([api(), mcp()]))).toBe("invalid_target");
    expect(refusal(() => requestedAudience([mcp(), api()]))).toBe("invalid_target");
    expect(refusal(() => checkResources([api(), mcp()]))).toBe("invalid_target");
  });
});

describe("a stored audience read back", () => {
  it("is the MCP server only when it says so; anything else, and rows from before audiences were stored, is the API", () => {
    expect(storedAudience("/api/mcp")).toBe(MCP_AUDIENCE);
    expect(storedAudience("/api")).toBe(API_AUDIENCE);
    expect(storedAudience(null)).toBe(API_AUDIENCE);
    expect(storedAudience(undefined)).toBe(API_AUDIENCE);
    expect(storedAudience("/api/other")).toBe(API_AUDIENCE);
  });
});

describe("each resource's metadata (RFC 9728 2, 3.1)", () => {
  it("names its own resource, document address and name", () => {
    expect(protectedResourceMetadata()).toMatchObject({ resource: api(), resource_name: "Bundle permissions API" });
    expect(protectedResourceMetadata(MCP_AUDIENCE)).toMatchObject({ resource: mcp(), resource_name: "Bundle permissions MCP server" });
    expect(resourceMetadataUrl()).toBe(`${env().appUrl}/.well-known/oauth-protected-resource/api`);
    expect(resourceMetadataUrl(MCP_AUDIENCE)).toBe(`${env().appUrl}/.well-known/oauth-protected-resource/api/mcp`);
  });
});
