// The one protected resource of this service and its metadata
// (docs/rules/tokens.md#protected-resource-metadata, docs/rules/tokens.md#resource-indicators):
// - RFC 9728: the API's resource identifier is `<APP_URL>/api`; its metadata document is served at
//   /.well-known/oauth-protected-resource/api (3.1: the resource's path after the well-known part) and the
//   same at /.well-known/oauth-protected-resource; every 401 from /api points at it (5.1, `resource_metadata`).
// - RFC 8707: `resource` on an authorization, PAR or token request must name that identifier (2: an absolute
//   URI without a fragment; any other is invalid_target). Every access token has it as its audience, asked
//   for or not, so nothing per token needs storing: introspection answers it as `aud`.
import { env } from "@/env";
import { DPOP_ALGS } from "@/dpop/proof";
import { OAuthError } from "@/oauth/errors";
import { API_SCOPES } from "@/oauth/scope";

export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/api";

/** `<APP_URL>/api`: the audience of every access token. */
export function apiResource(): string {
  return `${env().appUrl}/api`;
}

export function resourceMetadataUrl(): string {
  return `${env().appUrl}${RESOURCE_METADATA_PATH}`;
}

/** RFC 9728 2: the protected resource metadata document. */
export function protectedResourceMetadata() {
  return {
    resource: apiResource(),
    authorization_servers: [env().appUrl],
    scopes_supported: [...API_SCOPES],
    bearer_methods_supported: ["header"],
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    dpop_bound_access_tokens_required: false,
    resource_name: "Bundle permissions API",
    resource_documentation: `${env().appUrl}/docs`,
  };
}

/** Checks every `resource` value of a request (RFC 8707 2): each must be this service's API. */
export function checkResources(values: readonly unknown[]): void {
  for (const value of values) {
    if (value === undefined || value === null || value === "") continue;
    if (value !== apiResource()) throw new OAuthError("invalid_target", {}, "resource is not this service's API");
  }
}
