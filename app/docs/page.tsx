import type { Metadata } from "next";
import { openidConfiguration } from "@/oidc/discovery";
import { SCOPE_DESCRIPTIONS, SCOPES } from "@/oauth/scope";
import { CopyButton } from "../components/copy-button";
import { Card, Page } from "../components/ui";
import { endpointsOf, examplesFor } from "./developer-guide";

export const metadata: Metadata = { title: "Developer documentation" };

// The metadata's service_documentation (docs/rules/pages.md#developer-page): for developers of apps that use
// this deployment, with its own addresses (from the discovery metadata, so right on any APP_URL).
export default function DocsPage() {
  const meta = openidConfiguration();
  const endpoints = endpointsOf(meta);
  const examples = examplesFor(meta);
  const code = (text: string) => <code className="font-mono">{text}</code>;
  return (
    <Page
      title="Developer documentation"
      lead={<p>For developers of apps that sign people in here, call the API for them, or connect an AI agent. Every address and example on this page is this server&apos;s own: copy them as they are.</p>}
    >
      <nav aria-label="On this page" className="text-sm">
        <ul className="flex flex-wrap gap-x-4 gap-y-1">
          {[["issuer", "Issuer"], ["endpoints", "Endpoints"], ["scopes", "Scopes"], ["grants", "Choosing a grant"], ...examples.map((example) => [example.id, example.title] as const)].map(([id, title]) => (
            <li key={id}>
              <a href={`#${id}`} className="font-medium text-blue-700 underline underline-offset-2 hover:no-underline dark:text-blue-400">
                {title}
              </a>
            </li>
          ))}
        </ul>
      </nav>

      <Card className="space-y-2 text-sm" aria-labelledby="issuer">
        <h2 id="issuer" className="scroll-mt-4 text-lg font-semibold">
          Issuer
        </h2>
        <p className="flex flex-wrap items-center gap-x-3 gap-y-1">
          <code className="font-mono break-all" data-testid="issuer">
            {meta.issuer}
          </code>
          <CopyButton value={meta.issuer} label="Copy the issuer" />
        </p>
        <p>An OpenID Connect or OAuth library needs nothing else: it finds every endpoint in the discovery document. Register your app on the Clients page to get its client_id.</p>
      </Card>

      <Card className="space-y-3 text-sm" aria-labelledby="endpoints">
        <h2 id="endpoints" className="scroll-mt-4 text-lg font-semibold">
          Endpoints
        </h2>
        <dl className="space-y-3">
          {endpoints.map((endpoint) => (
            <div key={endpoint.url} className="space-y-0.5">
              <dt className="font-medium">
                {endpoint.label}
                {endpoint.field ? <span className="font-mono text-xs font-normal text-slate-600 dark:text-slate-400"> ({endpoint.field})</span> : null}
              </dt>
              <dd className="font-mono text-xs break-all">{endpoint.url}</dd>
            </div>
          ))}
        </dl>
      </Card>

      <Card className="space-y-2 text-sm" aria-labelledby="scopes">
        <h2 id="scopes" className="scroll-mt-4 text-lg font-semibold">
          Scopes
        </h2>
        <ul className="space-y-1">
          {SCOPES.map((scope) => (
            <li key={scope}>
              {code(scope)}: {SCOPE_DESCRIPTIONS[scope]}
            </li>
          ))}
        </ul>
      </Card>

      <Card className="space-y-2 text-sm" aria-labelledby="grants">
        <h2 id="grants" className="scroll-mt-4 text-lg font-semibold">
          Choosing a grant
        </h2>
        <p>Register a client on the Clients page with one grant type:</p>
        <ul className="list-disc space-y-1 pl-5">
          <li><strong>Authorization code</strong> for apps that sign people in: with a secret on a server, public (no secret, PKCE S256 required) in a native app or a browser. Ask for {code("openid")} (and {code("profile")}, {code("email")}) to get an id_token signed RS256.</li>
          <li><strong>Implicit</strong> for browser-only apps: the token arrives in the URL fragment; no refresh token.</li>
          <li><strong>Password</strong> for your own scripts: it works only for the account that owns the client.</li>
          <li><strong>Client credentials</strong> for your own server, acting for you without a password ({code("grant_type=client_credentials")}, no refresh token).</li>
          <li><strong>Device</strong> for TVs and command-line tools: the person types the device&apos;s code at {code(`${meta.issuer}/device`)} while the device polls the token endpoint every {code("interval")} seconds.</li>
        </ul>
        <p>
          Send access tokens as {code("Authorization: Bearer <token>")} (or {code("DPoP <token>")} with a proof, for a bound token). Access tokens last an hour; refresh tokens 30 days, and each works once: keep the new one from every refresh. A 401 means the token is no longer valid.{" "}
          {code("prompt=none")} never shows a page ({code("login_required")} or {code("consent_required")} come back instead); {code("prompt=login")} and {code("max_age")} ask for the password again; {code("prompt=consent")} asks for consent again.
        </p>
      </Card>

      {examples.map((example) => (
        <Card key={example.id} className="space-y-2 text-sm" aria-labelledby={example.id}>
          <div className="flex flex-wrap items-center justify-between gap-2">
            <h2 id={example.id} className="scroll-mt-4 text-lg font-semibold">
              {example.title}
            </h2>
            <CopyButton value={example.code} label={`Copy the ${example.title} example`} />
          </div>
          <p>{example.intro}</p>
          <pre className="overflow-x-auto rounded-lg bg-slate-100 p-3 text-xs leading-relaxed dark:bg-slate-900" tabIndex={0} role="region" aria-label={`${example.title} example`}>
            <code className="font-mono">{example.code}</code>
          </pre>
        </Card>
      ))}
    </Page>
  );
}
