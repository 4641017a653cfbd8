// What /docs shows a developer of this deployment (docs/rules/pages.md#developer-page): the issuer, every
// endpoint of the discovery metadata (src/oidc/discovery.ts, so every address is right on any APP_URL), and
// copy-ready examples (curl, openid-client 6, oauth4webapi 3, the MCP TypeScript SDK) with the server's own
// addresses. Nothing here refers to files of the repository: a deployed server's developers do not have it.
import { openidConfiguration } from "@/oidc/discovery";

type Metadata = ReturnType<typeof openidConfiguration>;

/** Metadata fields that are addresses, in words (anything else ending in _endpoint or _uri is listed by its name). */
const ENDPOINT_WORDS: Record<string, string> = {
  authorization_endpoint: "Authorization endpoint (RFC 6749 3.1)",
  token_endpoint: "Token endpoint (RFC 6749 3.2)",
  pushed_authorization_request_endpoint: "Pushed authorization requests (RFC 9126)",
  device_authorization_endpoint: "Device authorization (RFC 8628)",
  userinfo_endpoint: "UserInfo (OpenID Connect Core 5.3)",
  jwks_uri: "JWKS: the keys that sign id_tokens",
  revocation_endpoint: "Revocation (RFC 7009)",
  introspection_endpoint: "Introspection (RFC 7662)",
  registration_endpoint: "Dynamic client registration (RFC 7591)",
  end_session_endpoint: "Sign-out (OpenID Connect RP-Initiated Logout)",
  service_documentation: "This page",
};

export type Endpoint = { label: string; field: string | null; url: string };

export function endpointsOf(meta: Metadata): Endpoint[] {
  const fromMetadata = Object.entries(meta)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string" && (entry[0].endsWith("_endpoint") || entry[0].endsWith("_uri") || entry[0] === "service_documentation"))
    .map(([field, url]) => ({ label: ENDPOINT_WORDS[field] ?? field, field, url }));
  const { issuer } = meta;
  return [
    { label: "OpenID Connect discovery", field: null, url: `${issuer}/.well-known/openid-configuration` },
    { label: "Authorization server metadata (RFC 8414)", field: null, url: `${issuer}/.well-known/oauth-authorization-server` },
    ...fromMetadata,
    { label: "The API (resource)", field: null, url: `${issuer}/api` },
    { label: "The API's protected resource metadata (RFC 9728)", field: null, url: `${issuer}/.well-known/oauth-protected-resource/api` },
    { label: "MCP server (resource)", field: null, url: `${issuer}/api/mcp` },
    { label: "The MCP server's protected resource metadata (RFC 9728)", field: null, url: `${issuer}/.well-known/oauth-protected-resource/api/mcp` },
    { label: "Where people type a device's code", field: null, url: `${issuer}/device` },
    { label: "Where people register clients", field: null, url: `${issuer}/settings/clients` },
  ];
}

export type Example = { id: string; title: string; intro: string; language: "sh" | "js"; code: string };

/** The examples, written for `meta`'s issuer. */
export function examplesFor(meta: Metadata): Example[] {
  const issuer = meta.issuer;
  const http = issuer.startsWith("http:");
  // openid-client and oauth4webapi refuse plain http unless told: only a deployment on http needs the line.
  const oidcInsecure = http ? `, undefined, {\n  execute: [client.allowInsecureRequests], // this issuer is http: drop the line on https\n}` : "";
  const oauthInsecure = http ? `const options = { [oauth.allowInsecureRequests]: true }; // this issuer is http: use {} on https` : "const options = {};";
  const registration = "registration_endpoint" in meta && typeof meta.registration_endpoint === "string";
  return [
    {
      id: "curl",
      title: "curl",
      intro: "The metadata, a token for your own server (a client credentials client registered on the Clients page), a call to the API, then the device flow.",
      language: "sh",
      code: `# Everything a library needs, from the issuer alone
curl -s ${issuer}/.well-known/openid-configuration

# A token for your own server (grant type "Client credentials"): it acts for you
TOKEN=$(curl -s ${meta.token_endpoint} -u "$CLIENT_ID:$CLIENT_SECRET" \\
  -d grant_type=client_credentials -d scope=readonly | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')

# The API, with the token as a bearer
curl -s ${issuer}/api/bundle/ -H "Authorization: Bearer $TOKEN"

# Is it still valid? (introspection takes a confidential client's credentials)
curl -s ${meta.introspection_endpoint} -u "$CLIENT_ID:$CLIENT_SECRET" -d token="$TOKEN"

# Revoke it
curl -s ${meta.revocation_endpoint} -u "$CLIENT_ID:$CLIENT_SECRET" -d token="$TOKEN"

# The device flow (grant type "Device"): ask for a code, the person types it at ${issuer}/device,
# then poll every "interval" seconds until the token comes
curl -s ${meta.device_authorization_endpoint} -d client_id="$DEVICE_CLIENT_ID" -d scope=readonly
curl -s ${meta.token_endpoint} -d client_id="$DEVICE_CLIENT_ID" \\
  -d grant_type=urn:ietf:params:oauth:grant-type:device_code -d device_code="$DEVICE_CODE"`,
    },
    {
      id: "openid-client",
      title: "Sign people in: openid-client",
      intro: `With openid-client 6 (npm install openid-client) and an "Authorization code" client registered with the redirect URI http://localhost:8000/callback. Run as CLIENT_ID=… CLIENT_SECRET=… node sign-in.mjs.`,
      language: "js",
      code: `import * as client from "openid-client";
import { createServer } from "node:http";

const config = await client.discovery(new URL("${issuer}"), process.env.CLIENT_ID, process.env.CLIENT_SECRET${oidcInsecure});
const redirect_uri = "http://localhost:8000/callback";
const [verifier, state, nonce] = [client.randomPKCECodeVerifier(), client.randomState(), client.randomNonce()];
const url = client.buildAuthorizationUrl(config, {
  redirect_uri, scope: "openid profile email readonly", state, nonce,
  code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256",
});
console.log(\`Open \${url}\`);

createServer(async (req, res) => {
  if (!req.url.startsWith("/callback")) return res.end();
  const tokens = await client.authorizationCodeGrant(config, new URL(req.url, redirect_uri), {
    pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true,
  });
  const claims = tokens.claims(); // the id_token, validated
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  res.end(\`Signed in as \${userinfo.name} <\${userinfo.email}>\\n\`);
  process.exit(0);
}).listen(8000);`,
    },
    {
      id: "oauth4webapi",
      title: "Call the API for a person: oauth4webapi",
      intro: `With oauth4webapi 3 (npm install oauth4webapi), a public "Authorization code" client (PKCE, no secret) registered with the redirect URI http://127.0.0.1:8000/callback, and tokens bound to a key of yours (DPoP, RFC 9449). Run as CLIENT_ID=… node api.mjs.`,
      language: "js",
      code: `import * as oauth from "oauth4webapi";
import { createServer } from "node:http";

${oauthInsecure}
const issuer = new URL("${issuer}");
const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...options }));
const client = { client_id: process.env.CLIENT_ID };
const redirect_uri = "http://127.0.0.1:8000/callback";
const verifier = oauth.generateRandomCodeVerifier(), state = oauth.generateRandomState();
const url = new URL(as.authorization_endpoint);
url.search = new URLSearchParams({
  client_id: client.client_id, response_type: "code", redirect_uri, scope: "readonly", state,
  resource: "${issuer}/api", code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256",
}).toString();
console.log(\`Open \${url}\`);

createServer(async (req, res) => {
  if (!req.url.startsWith("/callback")) return res.end();
  const dpop = oauth.DPoP(client, await oauth.generateKeyPair("ES256"));
  const params = oauth.validateAuthResponse(as, client, new URL(req.url, redirect_uri), state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirect_uri, verifier, { DPoP: dpop, ...options });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  const bundles = await oauth.protectedResourceRequest(tokens.access_token, "GET", new URL("${issuer}/api/bundle/"), undefined, undefined, { DPoP: dpop, ...options });
  res.end(JSON.stringify(await bundles.json(), null, 2));
  process.exit(0);
}).listen(8000);`,
    },
    {
      id: "mcp",
      title: "Connect an AI agent: the MCP TypeScript SDK",
      intro: `${issuer}/api/mcp is a Model Context Protocol server (revision 2025-11-25, Streamable HTTP) whose tools act as the person who signed the agent in: whoami, list_bundles, create_bundle, list_permission_requests, request_bundle_access, withdraw_permission_request, list_shared_with_me. Its tokens are its own (resource ${issuer}/api/mcp). With @modelcontextprotocol/sdk: ${
        registration
          ? "the client finds the metadata, registers itself, sends the person to approve, and calls tools."
          : "this server takes no self-registration, so register a public \"Authorization code\" client on the Clients page with the redirect URI below and return it from clientInformation()."
      }`,
      language: "js",
      code: `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const redirectUrl = "http://127.0.0.1:8000/callback";
const saved = { ${registration ? "client: undefined" : "client: { client_id: process.env.CLIENT_ID }"}, tokens: undefined, verifier: undefined };
const authProvider = {
  redirectUrl,
  clientMetadata: { client_name: "My agent", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"], token_endpoint_auth_method: "none", scope: "readonly readwrite" },
  clientInformation: () => saved.client,
  saveClientInformation: (client) => { saved.client = client; },
  tokens: () => saved.tokens,
  saveTokens: (tokens) => { saved.tokens = tokens; },
  state: () => crypto.randomUUID(), // required: an authorization request without state is refused
  redirectToAuthorization: (url) => console.log(\`Open \${url} and approve\`),
  saveCodeVerifier: (verifier) => { saved.verifier = verifier; },
  codeVerifier: () => saved.verifier,
};
const url = new URL("${issuer}/api/mcp");
const transport = new StreamableHTTPClientTransport(url, { authProvider });
const client = new Client({ name: "my-agent", version: "1.0.0" });
try {
  await client.connect(transport); // 401: finds the metadata${registration ? ", registers," : ""} and sends the person to approve
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  const code = await codeFromYourCallback(); // ...?code=… arrives at redirectUrl
  await transport.finishAuth(code); // the code for tokens, with resource=${issuer}/api/mcp
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider }));
}
console.log((await client.callTool({ name: "whoami", arguments: {} })).structuredContent);`,
    },
  ];
}
