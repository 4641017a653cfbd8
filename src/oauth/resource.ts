// The protected resources of this service and their metadata
// (docs/rules/tokens.md#protected-resource-metadata, docs/rules/tokens.md#resource-indicators,
// docs/rules/agents.md#audience):
// - RFC 9728: two resources. The API's identifier is `<APP_URL>/api`, its metadata document served at
//   /.well-known/oauth-protected-resource/api (3.1: the resource's path after the well-known part) and the
//   same at /.well-known/oauth-protected-resource; the Model Context Protocol server's is `<APP_URL>/api/mcp`,
//   its document at /.well-known/oauth-protected-resource/api/mcp. Every 401 of a resource points at its own
//   document (5.1, `resource_metadata`).
// - RFC 8707: `resource` on an authorization, PAR or token request must name one of the two (2: an absolute
//   URI without a fragment; any other, or both at once, is invalid_target). The named one is the token's
//   audience, stored with the token as a path of APP_URL ("/api" or "/api/mcp"; "/api" when none is named);
//   each resource accepts only its own tokens, and introspection answers the audience as `aud`.
import { env } from "@/env";
import { DPOP_ALGS } from "@/dpop/proof";
import { OAuthError } from "@/oauth/errors";
import { API_SCOPES } from "@/oauth/scope";

/** A resource of this service, as stored with a token: its path under APP_URL. */
export type Audience = "/api" | "/api/mcp";
export const API_AUDIENCE: Audience = "/api";
export const MCP_AUDIENCE: Audience = "/api/mcp";
const AUDIENCES: readonly Audience[] = [API_AUDIENCE, MCP_AUDIENCE];

const WELL_KNOWN = "/.well-known/oauth-protected-resource";
export const RESOURCE_METADATA_PATH = `${WELL_KNOWN}/api`;

/** `<APP_URL>/api`: the API's resource identifier. */
export function apiResource(): string {
  return resourceUri(API_AUDIENCE);
}

/** The resource identifier of an audience: `<APP_URL>/api` or `<APP_URL>/api/mcp`. */
export function resourceUri(audience: Audience): string {
  return `${env().appUrl}${audience}`;
}

/** The address of a resource's metadata document (RFC 9728 3.1). */
export function resourceMetadataUrl(audience: Audience = API_AUDIENCE): string {
  return `${env().appUrl}${WELL_KNOWN}${audience}`;
}

/** RFC 9728 2: the protected resource metadata document of a resource. */
export function protectedResourceMetadata(audience: Audience = API_AUDIENCE) {
  return {
    resource: resourceUri(audience),
    authorization_servers: [env().appUrl],
    scopes_supported: [...API_SCOPES],
    bearer_methods_supported: ["header"],
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    dpop_bound_access_tokens_required: false,
    resource_name: audience === MCP_AUDIENCE ? "Bundle permissions MCP server" : "Bundle permissions API",
    resource_documentation: `${env().appUrl}/docs`,
  };
}

/**
 * The audience the `resource` values of a request name (RFC 8707 2), or null when they name none; throws
 * invalid_target for a value that is not one of this service's resources, or for two different ones (a token
 * has one audience).
 */
export function requestedAudience(values: readonly unknown[]): Audience | null {
  let named: Audience | null = null;
  for (const value of values) {
    if (value === undefined || value === null || value === "") continue;
    const audience = AUDIENCES.find((candidate) => value === resourceUri(candidate));
    if (audience === undefined) throw new OAuthError("invalid_target", {}, "resource is not one of this service's resources");
    if (named !== null && named !== audience) throw new OAuthError("invalid_target", {}, "one resource per token");
    named = audience;
  }
  return named;
}

/** Checks every `resource` value of a request (RFC 8707 2); see requestedAudience(). */
export function checkResources(values: readonly unknown[]): void {
  requestedAudience(values);
}

/** A stored audience, read back (rows written before audiences were stored say "/api"). */
export function storedAudience(value: string | null | undefined): Audience {
  return value === MCP_AUDIENCE ? MCP_AUDIENCE : API_AUDIENCE;
}
