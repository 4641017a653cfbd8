// RFC 8414 authorization server metadata, served at /.well-known/oauth-authorization-server, and the base of
// the OpenID Connect discovery document (src/oidc/discovery.ts). Static per deployment: everything comes
// from APP_URL, REGISTRATION and the server's fixed capabilities (docs/rules/tokens.md#metadata): the PAR
// endpoint (RFC 9126 5), DPoP's algorithms (RFC 9449 5.1), and registration_endpoint only while registration
// is on (RFC 7591), client assertions (private_key_jwt, RFC 7523 2.2; docs/rules/tokens.md#client-assertions)
// with their algorithms at every endpoint that authenticates clients, and client_id_metadata_document_supported
// while CLIENT_ID_METADATA is on (docs/rules/tokens.md#client-id-metadata-documents).
import { env } from "@/env";
import { DPOP_ALGS } from "@/dpop/proof";
import { SCOPES } from "@/oauth/scope";
import { CLIENT_ASSERTION_ALGS } from "@/clients/client-keys";

export function serverMetadata() {
  const issuer = env().appUrl;
  const clientAuth = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"];
  const assertionAlgs = [...CLIENT_ASSERTION_ALGS];
  return {
    issuer,
    authorization_endpoint: `${issuer}/api/connect/oauth2/auth/`,
    token_endpoint: `${issuer}/api/connect/oauth2/token/`,
    revocation_endpoint: `${issuer}/api/connect/oauth2/revoke/`,
    introspection_endpoint: `${issuer}/api/connect/oauth2/introspect/`,
    device_authorization_endpoint: `${issuer}/api/connect/oauth2/device/`,
    pushed_authorization_request_endpoint: `${issuer}/api/connect/oauth2/par/`,
    ...(env().registration === "off" ? {} : { registration_endpoint: `${issuer}/api/connect/oauth2/register/` }),
    jwks_uri: `${issuer}/api/connect/oauth2/jwks/`,
    grant_types_supported: [
      "authorization_code",
      "implicit",
      "password",
      "refresh_token",
      "client_credentials",
      "urn:ietf:params:oauth:grant-type:device_code",
    ],
    response_types_supported: ["code", "token"],
    response_modes_supported: ["query", "fragment"],
    scopes_supported: [...SCOPES],
    token_endpoint_auth_methods_supported: clientAuth,
    token_endpoint_auth_signing_alg_values_supported: assertionAlgs,
    revocation_endpoint_auth_methods_supported: clientAuth,
    revocation_endpoint_auth_signing_alg_values_supported: assertionAlgs,
    introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt"],
    introspection_endpoint_auth_signing_alg_values_supported: assertionAlgs,
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
    // Per client (require_pushed_authorization_requests in its registration, or the CLI's --require-par).
    require_pushed_authorization_requests: false,
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    ...(env().clientIdMetadata ? { client_id_metadata_document_supported: true } : {}),
    service_documentation: `${issuer}/docs`,
  };
}
