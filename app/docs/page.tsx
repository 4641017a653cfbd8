import type { Metadata } from "next";
import { serverMetadata } from "@/oauth/metadata";
import { SCOPE_DESCRIPTIONS, SCOPES } from "@/oauth/scope";
import { Card, Page } from "../components/ui";

export const metadata: Metadata = { title: "Developer documentation" };

// service_documentation of the RFC 8414 metadata: what a client developer needs to get started.
export default function DocsPage() {
  const meta = serverMetadata();
  const rows: [string, string][] = [
    ["Metadata (RFC 8414)", `${meta.issuer}/.well-known/oauth-authorization-server`],
    ["Authorization endpoint", meta.authorization_endpoint],
    ["Token endpoint", meta.token_endpoint],
    ["Revocation (RFC 7009)", meta.revocation_endpoint],
    ["Introspection (RFC 7662)", meta.introspection_endpoint],
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
        </ul>
        <p>Send access tokens as <code className="font-mono">Authorization: Bearer &lt;token&gt;</code>. Access tokens last an hour; refresh tokens 30 days, and each works once. A 401 means the token is no longer valid.</p>
      </Card>
    </Page>
  );
}
