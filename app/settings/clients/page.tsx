import type { Metadata } from "next";
import { listOwnClients } from "@/clients/manage-clients";
import { Button, Card, Page } from "../../components/ui";
import { requireUser } from "../require-user";
import { removeClient } from "./actions";
import { RegisterClientForm, RotateSecretForm } from "./client-forms";

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
    <Page title="Your clients">
      <Card>
        <h2 className="mb-4 text-lg font-semibold">Register a client</h2>
        <RegisterClientForm />
      </Card>
      <section aria-labelledby="registered">
        <h2 id="registered" className="text-lg font-semibold">
          Registered clients
        </h2>
        {clients.length === 0 ? <p className="mt-2 text-sm text-slate-600">You have not registered a client yet.</p> : null}
        <ul className="mt-4 space-y-4">
          {clients.map((client) => (
            <li key={client.client_id}>
              <Card className="space-y-3">
                <div>
                  <h3 className="font-semibold">{client.name}</h3>
                  <p className="text-sm text-slate-600 dark:text-slate-400">
                    {GRANT_NAMES[client.grant_type]} · {client.public || client.grant_type === "implicit" ? "public" : "confidential"}
                  </p>
                  <p className="mt-1 font-mono text-xs break-all">client_id {client.client_id}</p>
                  {client.redirect_uris.length ? (
                    <ul className="mt-1 font-mono text-xs break-all text-slate-600 dark:text-slate-400">
                      {client.redirect_uris.map((uri) => (
                        <li key={uri}>{uri}</li>
                      ))}
                    </ul>
                  ) : null}
                </div>
                <div className="flex flex-wrap items-start gap-3">
                  {!client.public ? <RotateSecretForm clientId={client.client_id} name={client.name} /> : null}
                  <form action={removeClient}>
                    <input type="hidden" name="client_id" value={client.client_id} />
                    <Button type="submit" variant="danger" aria-label={`Delete ${client.name}`}>
                      Delete
                    </Button>
                  </form>
                </div>
              </Card>
            </li>
          ))}
        </ul>
      </section>
    </Page>
  );
}
