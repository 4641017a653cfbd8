// Development seed: on an empty database, two demo users, one client of each grant type and a bundle. The
// credentials are printed once (secrets are stored only as digests). Never runs in production.
import { randomBytes } from "node:crypto";
import { createBundle } from "@/bundles/create-bundle";
import { createClient } from "@/clients/create-client";
import { env } from "@/env";
import { db } from "@/server/db";
import { createUser } from "@/users/create-user";

export const DEMO_REDIRECT_URI = "http://localhost:8000/callback";

export async function seedIfEmpty(): Promise<string | null> {
  if ((await (await db()).user.count()) > 0) return null;
  const password = () => randomBytes(9).toString("base64url");
  const alicePassword = password();
  const bobPassword = password();
  const alice = await createUser({ email: "alice@example.com", password: alicePassword, name: "Alice Demo" });
  await createUser({ email: "bob@example.com", password: bobPassword, name: "Bob Demo" });
  const code = await createClient({ ownerId: alice.id, name: "Demo web app (authorization code)", grantType: "authorization_code", redirectUris: [DEMO_REDIRECT_URI] });
  const implicit = await createClient({ ownerId: alice.id, name: "Demo browser app (implicit)", grantType: "implicit", redirectUris: [DEMO_REDIRECT_URI] });
  const pw = await createClient({ ownerId: alice.id, name: "Demo script (password)", grantType: "password" });
  const service = await createClient({ ownerId: alice.id, name: "Demo server (client credentials)", grantType: "client_credentials" });
  const device = await createClient({ ownerId: alice.id, name: "Demo TV (device)", grantType: "device_code", isPublic: true });
  const bundle = await createBundle({ ownerId: alice.id, name: "Alice's photos" });
  const base = env().appUrl;
  return [
    "Demo data created (shown once; secrets are stored only as digests):",
    `  user    alice@example.com  password ${alicePassword}   (owns the clients and the bundle)`,
    `  user    bob@example.com    password ${bobPassword}`,
    `  client  authorization_code client_id ${code.client_id}  client_secret ${code.client_secret}  redirect_uri ${DEMO_REDIRECT_URI}`,
    `  client  implicit           client_id ${implicit.client_id}  client_secret ${implicit.client_secret}  redirect_uri ${DEMO_REDIRECT_URI}`,
    `  client  password           client_id ${pw.client_id}  client_secret ${pw.client_secret}`,
    `  client  client_credentials client_id ${service.client_id}  client_secret ${service.client_secret}`,
    `  client  device_code        client_id ${device.client_id}  (public: no secret)`,
    `  bundle  ${bundle.resource_uri} "${bundle.name}"`,
    "",
    "  Try the authorization code flow in a browser with the example client (README, \"Walk-through\"):",
    `  npm run example-client -- --client-id=${code.client_id} --client-secret=${code.client_secret}`,
    "",
    "  Try the password grant:",
    `  curl -s ${base}/api/connect/oauth2/token/ -H 'Content-Type: application/json' \\`,
    `    -d '{"grant_type":"password","client_id":"${pw.client_id}","client_secret":"${pw.client_secret}","username":"alice@example.com","password":"${alicePassword}","scope":"readonly readwrite"}'`,
    "",
    "  Try the device flow (then open verification_uri_complete, approve, and poll as the README shows):",
    `  curl -s ${base}/api/connect/oauth2/device/ -d client_id=${device.client_id} -d scope=readonly`,
  ].join("\n");
}
