// Test factories. They go through the same domain functions as the CLI and the dev seed.
import { randomBytes } from "node:crypto";
import { createClient, type TCreateClient } from "@/clients/create-client";
import { createUser } from "@/users/create-user";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { BASE, call } from "@/testing/app";
import { sessionCookie } from "@/testing/session";

export const PASSWORD = "correct horse battery";

export function uniqueEmail(prefix = "user"): string {
  return `${prefix}-${randomBytes(6).toString("hex")}@example.test`;
}

export async function makeUser(options: { email?: string; name?: string; password?: string } = {}) {
  const email = options.email ?? uniqueEmail();
  const user = await createUser({ email, password: options.password ?? PASSWORD, name: options.name ?? "Test User" });
  return { ...user, password: options.password ?? PASSWORD };
}

export async function makeClient(options: Partial<TCreateClient> & { ownerId: number }) {
  const grantType = options.grantType ?? "password";
  return createClient({
    name: "Test client",
    grantType,
    redirectUris: grantType === "password" ? [] : ["https://client.example.test/callback"],
    ...options,
  });
}

/** A user, their password client, and a token pair from the password grant. */
export async function passwordSession(scope = "readonly readwrite") {
  const user = await makeUser();
  const client = await makeClient({ ownerId: user.id });
  const response = await call("POST", "/api/connect/oauth2/token/", {
    body: {
      grant_type: "password",
      client_id: client.client_id,
      client_secret: client.client_secret,
      username: user.email,
      password: user.password,
      scope,
    },
  });
  if (response.status !== 200) throw new Error(`password grant failed: ${response.text}`);
  const tokens = response.json as { access_token: string; refresh_token: string };
  return { user, client, tokens, accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
}

/** A code for a new confidential code client's new user, through the authorization endpoint and the consent form. */
export async function approvedCode(redirectUri: string) {
  const owner = await makeUser();
  const user = await makeUser();
  const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", redirectUris: [redirectUri] });
  const cookie = await sessionCookie(user);
  const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: redirectUri, scope: "readonly", state: "s" });
  const first = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie } });
  const sealed = new URL(first.headers.get("location")!, BASE).searchParams.get("request")!;
  const decided = await call("POST", "/consent/decide", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie },
    raw: new URLSearchParams({ request: sealed, csrf: consentCsrfToken(user.id, sealed), decision: "approve" }).toString(),
  });
  return { user, client, code: new URL(decided.headers.get("location")!).searchParams.get("code")! };
}
