// Test factories. They go through the same domain functions as the CLI and the dev seed: users are made
// confirmed (src/users/create-user.ts), as the CLI makes them, so that they may register clients and get
// tokens (docs/rules/accounts.md#unconfirmed-accounts). An unconfirmed account comes only from sign-up
// (src/accounts/sign-up.ts); what such an account could make when nothing stopped it is written directly by
// the *Row helpers below.
import { randomBytes } from "node:crypto";
import { createClient, type TCreateClient } from "@/clients/create-client";
import { now } from "@/clock";
import { digest, randomSecret } from "@/secrets";
import { write } from "@/db/client";
import { formatScope, type Scope } from "@/oauth/scope";
import { mintTokens } from "@/oauth/tokens";
import { createUser } from "@/users/create-user";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { deviceFormCsrfToken } from "@/device/verify-user-code";
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

/**
 * The device flow's approval through its pages (RFC 8628 3.3): `user`, signed in, types `userCode` on the
 * device page and approves the consent form it leads to.
 */
export async function approveUserCode(user: { id: number; name?: string; email?: string }, userCode: string): Promise<void> {
  const cookie = await sessionCookie(user);
  const typed = await call("POST", "/device/verify", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie },
    raw: new URLSearchParams({ user_code: userCode, csrf: deviceFormCsrfToken(user.id) }).toString(),
  });
  const sealed = new URL(typed.headers.get("location")!, BASE).searchParams.get("request")!;
  const decided = await call("POST", "/consent/decide", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE, cookie },
    raw: new URLSearchParams({ request: sealed, csrf: consentCsrfToken(user.id, sealed), decision: "approve" }).toString(),
  });
  const location = decided.headers.get("location");
  if (location !== "/device?done=approved") throw new Error(`device approval failed: ${decided.status} ${location ?? decided.text}`);
}

/**
 * A public device client of another user, a device authorization it started (RFC 8628 3.1), approved by a new
 * user; and the client's poll of it at the token endpoint (RFC 8628 3.4).
 */
export async function approvedDeviceCode() {
  const owner = await makeUser();
  const user = await makeUser();
  const client = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [], isPublic: true });
  const started = await call("POST", "/api/connect/oauth2/device/", { body: { client_id: client.client_id } });
  const { device_code, user_code } = started.json as { device_code: string; user_code: string };
  await approveUserCode(user, user_code);
  const poll = () =>
    call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code, client_id: client.client_id } });
  return { user, client, device_code, poll };
}

/**
 * A client row of `ownerId`, written directly, past the rules of createClient (the state an account whose
 * address is not confirmed could leave behind when nothing stopped it; for tests of what confirmation undoes).
 */
export async function clientRow(options: { ownerId: number; grantType?: string; redirectUris?: string[]; firstParty?: boolean }) {
  const secret = randomSecret();
  const row = await write((tx) =>
    tx.client.create({
      data: {
        clientId: randomSecret(16),
        name: "Client written directly",
        ownerId: options.ownerId,
        grantType: options.grantType ?? "password",
        firstParty: options.firstParty ?? false,
        secretDigest: digest(secret),
        redirectUris: JSON.stringify(options.redirectUris ?? []),
      },
    }),
  );
  return { id: row.id, client_id: row.clientId, client_secret: secret as string | null };
}

/**
 * A grant of `userId` to the client (its internal id) with an access and a refresh token, written directly,
 * past the grants' rules (as clientRow).
 */
export async function grantRow(options: { userId: number; clientId: number; grantType?: string; scopes?: Scope[] }) {
  const scopes = options.scopes ?? ["readonly"];
  return write(async (tx) => {
    const at = now();
    const grant = await tx.grant.create({
      data: { clientId: options.clientId, userId: options.userId, grantType: options.grantType ?? "password", scopes: formatScope(scopes), createdAt: at, lastUsedAt: at },
    });
    const minted = mintTokens({ grantId: grant.id, clientId: options.clientId, userId: options.userId, scopes, refreshScopes: scopes }, at);
    await tx.accessToken.create({ data: minted.access });
    await tx.refreshToken.create({ data: minted.refresh! });
    return { grantId: grant.id, accessToken: minted.record.access_token, refreshToken: minted.record.refresh_token! };
  });
}

/** A remembered consent of `userId` for the client (its internal id), written directly (as clientRow). */
export async function consentRow(options: { userId: number; clientId: number; scopes?: Scope[] }) {
  const at = now();
  return write((tx) => tx.consent.create({ data: { userId: options.userId, clientId: options.clientId, scopes: formatScope(options.scopes ?? ["readonly"]), createdAt: at, updatedAt: at } }));
}
