import type { Metadata } from "next";
import { openidConfiguration } from "@/oidc/discovery";
import { SCOPE_DESCRIPTIONS, SCOPES } from "@/oauth/scope";
import { Card, Page } from "../components/ui";

export const metadata: Metadata = { title: "Developer documentation" };

// service_documentation of the RFC 8414 metadata: what a client developer needs to get started.
export default function DocsPage() {
  const meta = openidConfiguration();
  const rows: [string, string][] = [
    ["Metadata (RFC 8414)", `${meta.issuer}/.well-known/oauth-authorization-server`],
    ["OpenID Connect discovery", `${meta.issuer}/.well-known/openid-configuration`],
    ["Authorization endpoint", meta.authorization_endpoint],
    ["Token endpoint", meta.token_endpoint],
    ["Device authorization (RFC 8628)", meta.device_authorization_endpoint],
    ["UserInfo", meta.userinfo_endpoint],
    ["JWKS (id_token keys)", meta.jwks_uri],
    ["Revocation (RFC 7009)", meta.revocation_endpoint],
    ["Introspection (RFC 7662)", meta.introspection_endpoint],
    ["Protected resource metadata (RFC 9728)", `${meta.issuer}/.well-known/oauth-protected-resource/api`],
    ["Pushed authorization requests (RFC 9126)", meta.pushed_authorization_request_endpoint],
    ...("registration_endpoint" in meta && typeof meta.registration_endpoint === "string" ? ([["Registration (RFC 7591)", meta.registration_endpoint]] as [string, string][]) : []),
  ];
  return (
    <Page title="Developer documentation">
      <Card>
        <h2 className="text-lg font-semibold">Endpoints</h2>
        <dl className="mt-3 grid gap-x-4 gap-y-2 text-sm sm:grid-cols-[auto_1fr]">
          {rows.map(([label, url]) => (
            <div key={label} className="contents">
              <dt className="font-medium">{label}</dt>
              <dd className="font-mono break-all">{url}</dd>
            </div>
          ))}
        </dl>
      </Card>
      <Card>
        <h2 className="text-lg font-semibold">Scopes</h2>
        <ul className="mt-3 space-y-1 text-sm">
          {SCOPES.map((scope) => (
            <li key={scope}>
              <code className="font-mono">{scope}</code>: {SCOPE_DESCRIPTIONS[scope]}
            </li>
          ))}
        </ul>
      </Card>
      <Card className="space-y-2 text-sm">
        <h2 className="text-lg font-semibold">Getting started</h2>
        <p>Register a client on the Clients page (or ask an administrator), choosing one grant type:</p>
        <ul className="list-disc space-y-1 pl-5">
          <li><strong>Authorization code</strong> for server-side apps that keep a secret; PKCE (S256) is accepted, and required for public clients.</li>
          <li><strong>Implicit</strong> for browser-only apps: the token arrives in the URL fragment; there is no refresh token.</li>
          <li><strong>Password</strong> for your own scripts: it works only for the account that owns the client.</li>
          <li><strong>Client credentials</strong> for your own server: it acts for the account that owns the client, without a password (<code className="font-mono">grant_type=client_credentials</code>, scopes <code className="font-mono">readonly</code> and <code className="font-mono">readwrite</code>, no refresh token).</li>
          <li><strong>Device</strong> for TVs and command-line tools without a browser: the device asks the device authorization endpoint for a code, the person types it at <code className="font-mono">{meta.issuer}/device</code>, and the device polls the token endpoint (<code className="font-mono">grant_type=urn:ietf:params:oauth:grant-type:device_code</code>) every <code className="font-mono">interval</code> seconds.</li>
        </ul>
        <p>Send access tokens as <code className="font-mono">Authorization: Bearer &lt;token&gt;</code>. Access tokens last an hour; refresh tokens 30 days, and each works once. A 401 means the token is no longer valid.</p>
      </Card>
      <Card className="space-y-2 text-sm">
        <h2 className="text-lg font-semibold">Connecting a client that starts from a URL</h2>
        <p>
          An agent that knows only the API, <code className="font-mono">{meta.issuer}/api</code>, gets there in eight steps (the repository’s docs/api.md shows each with oauth4webapi and curl):
        </p>
        <ol className="list-decimal space-y-1 pl-5">
          <li>Call the API without a token: the 401&apos;s <code className="font-mono">WWW-Authenticate</code> names <code className="font-mono">resource_metadata</code>.</li>
          <li>Read the protected resource metadata (RFC 9728): the authorization server, the scopes, the DPoP algorithms.</li>
          <li>Read the authorization server metadata (RFC 8414).</li>
          <li>Register (RFC 7591) at the <code className="font-mono">registration_endpoint</code>, when the administrator turned registration on (with an initial access token, or open to all).</li>
          <li>Push the authorization request (RFC 9126) with PKCE and <code className="font-mono">resource={meta.issuer}/api</code> (RFC 8707).</li>
          <li>Send the person to the authorization endpoint with <code className="font-mono">client_id</code> and <code className="font-mono">request_uri</code> only.</li>
          <li>Exchange the code with a <code className="font-mono">DPoP</code> proof (RFC 9449, ES256 or RS256): the token is bound to your key (<code className="font-mono">token_type: DPoP</code>).</li>
          <li>Call the API with <code className="font-mono">Authorization: DPoP &lt;token&gt;</code> and a fresh proof carrying <code className="font-mono">ath</code>. A stolen bound token is useless without your key.</li>
        </ol>
      </Card>
      <Card className="space-y-2 text-sm">
        <h2 className="text-lg font-semibold">Sign in with this service (OpenID Connect)</h2>
        <p>
          Configure any OpenID Connect library with the issuer <code className="font-mono">{meta.issuer}</code> alone: it finds everything else at the discovery document. Ask for{" "}
          <code className="font-mono">openid</code> (plus <code className="font-mono">profile</code> for the name and <code className="font-mono">email</code> for the e-mail address) with the authorization code flow and PKCE.
        </p>
        <p>
          The token response then carries an <code className="font-mono">id_token</code> signed RS256 (its <code className="font-mono">kid</code> is in the JWKS) with <code className="font-mono">iss</code>, <code className="font-mono">sub</code> (the user id),{" "}
          <code className="font-mono">aud</code>, <code className="font-mono">exp</code>, <code className="font-mono">iat</code>, <code className="font-mono">auth_time</code>, your <code className="font-mono">nonce</code>, <code className="font-mono">at_hash</code> and the claims of the scopes; every refresh brings a new one.
          The UserInfo endpoint answers the same claims for an access token that holds <code className="font-mono">openid</code>. A device flow that asks for <code className="font-mono">openid</code> gets an id_token too.
        </p>
        <p>
          <code className="font-mono">prompt=none</code> never shows a page (<code className="font-mono">login_required</code> or <code className="font-mono">consent_required</code> come back instead), <code className="font-mono">prompt=login</code> and{" "}
          <code className="font-mono">max_age</code> ask for the password again, <code className="font-mono">prompt=consent</code> asks for consent even when it was given before.
        </p>
      </Card>
    </Page>
  );
}
