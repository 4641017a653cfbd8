import type { Metadata } from "next";
import { listOwnClients } from "@/clients/manage-clients";
import { StatusProvider } from "../../components/status";
import { Card, Page } from "../../components/ui";
import { requireUser } from "../require-user";
import { ClientIdLine, DeleteClient, EditClient, RegisterClientForm, RotateSecret } from "./client-forms";

export const metadata: Metadata = { title: "Your clients" };

const GRANT_NAMES = {
  authorization_code: "Authorization code",
  implicit: "Implicit",
  password: "Password",
  client_credentials: "Client credentials",
  device_code: "Device",
} as const;

export default async function ClientsPage() {
  const user = await requireUser("/settings/clients");
  const clients = await listOwnClients(user.id);
  return (
    <Page title="Your clients" lead={<p>Apps you build sign people in here. Register one to get its client_id (and, unless it is public, a secret); edit its name and addresses at any time without breaking what people gave it.</p>}>
      <StatusProvider>
        <Card>
          <h2 className="mb-4 text-lg font-semibold">Register a client</h2>
          <RegisterClientForm />
        </Card>
        <section aria-labelledby="registered" className="space-y-4">
          <h2 id="registered" className="text-lg font-semibold">
            Registered clients
          </h2>
          {clients.length === 0 ? <p className="text-sm text-slate-600 dark:text-slate-400">You have not registered a client yet.</p> : null}
          <ul className="space-y-4">
            {clients.map((client) => (
              <li key={client.client_id}>
                <Card className="space-y-3">
                  <div className="space-y-2">
                    <h3 className="font-semibold">{client.name}</h3>
                    <p className="text-sm text-slate-600 dark:text-slate-400">
                      {GRANT_NAMES[client.grant_type]} · {client.public || client.grant_type === "implicit" ? "public" : "confidential"}
                    </p>
                    <ClientIdLine clientId={client.client_id} />
                    {client.redirect_uris.length ? (
                      <ul className="font-mono text-xs break-all text-slate-600 dark:text-slate-400" aria-label={`Redirect URIs of ${client.name}`}>
                        {client.redirect_uris.map((uri) => (
                          <li key={uri}>{uri}</li>
                        ))}
                      </ul>
                    ) : null}
                    {client.post_logout_redirect_uris.length ? (
                      <ul className="font-mono text-xs break-all text-slate-600 dark:text-slate-400" aria-label={`Post-logout redirect URIs of ${client.name}`}>
                        {client.post_logout_redirect_uris.map((uri) => (
                          <li key={uri}>after sign-out: {uri}</li>
                        ))}
                      </ul>
                    ) : null}
                    {client.backchannel_logout_uri ? (
                      <p className="font-mono text-xs break-all text-slate-600 dark:text-slate-400">back-channel logout: {client.backchannel_logout_uri}</p>
                    ) : null}
                    {client.logo_uri ? <p className="font-mono text-xs break-all text-slate-600 dark:text-slate-400">logo: {client.logo_uri}</p> : null}
                    {client.token_endpoint_auth_method === "private_key_jwt" ? (
                      <p className="text-sm text-slate-600 dark:text-slate-400">Signs a JWT with its keys instead of sending a secret (private_key_jwt).</p>
                    ) : null}
                  </div>
                  <div className="flex flex-wrap items-start gap-3">
                    <EditClient
                      client={{
                        clientId: client.client_id,
                        name: client.name,
                        grantType: client.grant_type,
                        redirectUris: client.redirect_uris,
                        postLogoutRedirectUris: client.post_logout_redirect_uris,
                        backchannelLogoutUri: client.backchannel_logout_uri,
                        logoUri: client.logo_uri,
                      }}
                    />
                    {!client.public && client.token_endpoint_auth_method !== "private_key_jwt" ? <RotateSecret clientId={client.client_id} name={client.name} /> : null}
                    <DeleteClient clientId={client.client_id} name={client.name} />
                  </div>
                </Card>
              </li>
            ))}
          </ul>
        </section>
      </StatusProvider>
    </Page>
  );
}
