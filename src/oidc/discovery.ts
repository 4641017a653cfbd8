// OpenID Connect Discovery 1.0 section 3, served at /.well-known/openid-configuration
// (docs/rules/openid-connect.md#discovery): the RFC 8414 metadata document (src/oauth/metadata.ts, the one
// source of both) plus the fields that only OpenID Connect defines. Static per deployment.
import { serverMetadata } from "@/oauth/metadata";
import { CLAIMS_SUPPORTED } from "@/oidc/claims";
import { SIGNING_ALG } from "@/oidc/keys";

export function openidConfiguration() {
  const metadata = serverMetadata();
  return {
    ...metadata,
    userinfo_endpoint: `${metadata.issuer}/api/connect/oauth2/userinfo/`,
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    subject_types_supported: ["public"],
    claims_supported: CLAIMS_SUPPORTED,
    prompt_values_supported: ["none", "login", "consent"],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    // docs/rules/openid-connect.md#logout, docs/rules/openid-connect.md#back-channel-logout
    end_session_endpoint: `${metadata.issuer}/api/connect/oauth2/logout/`,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
  };
}
