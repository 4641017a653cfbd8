// Interoperability: independent OAuth 2 client libraries from npm, each configured only from the RFC 8414
// metadata document (or OpenID Connect discovery) where it supports that, against the running production
// build. Every request they make by default must succeed, or fail exactly as the RFCs say. Consent is given
// in Chromium.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { exportJWK, generateKeyPair } from "jose";
import * as openid from "openid-client";
import * as oauth from "oauth4webapi";
import { AuthorizationCode, ResourceOwnerPassword } from "simple-oauth2";
import { baseURL, callbackPort } from "./env";
import { approveInBrowser, CALLBACK, cli, expectAt, newUser, signIn, startCallbackServer } from "./helpers";

type Registered = { client_id: string; client_secret: string | null };

let stopCallbackServer: () => Promise<void>;
test.beforeAll(async () => {
  stopCallbackServer = await startCallbackServer();
});
test.afterAll(() => stopCallbackServer());

function client(grant: "authorization_code" | "implicit" | "password" | "client_credentials" | "device_code", owner: string, redirectUri = CALLBACK, ...extra: string[]): Registered {
  const args = ["client:create", "--owner", owner, "--name", `Interop ${grant}`, "--grant", grant, ...extra];
  if (grant === "authorization_code" || grant === "implicit") args.push("--redirect-uri", redirectUri);
  return cli<Registered>(...args);
}

test.describe("oauth4webapi", () => {
  const insecure = { [oauth.allowInsecureRequests]: true };

  test("discovery, authorization code with PKCE, refresh, introspection and revocation", async ({ page }) => {
    const user = newUser();
    const registered = client("authorization_code", newUser().email);
    const as = await oauth.processDiscoveryResponse(new URL(baseURL), await oauth.discoveryRequest(new URL(baseURL), { algorithm: "oauth2", ...insecure }));
    expect(as.issuer).toBe(baseURL);
    const c: oauth.Client = { client_id: registered.client_id };
    const auth = oauth.ClientSecretBasic(registered.client_secret!);

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ response_type: "code", client_id: c.client_id, redirect_uri: CALLBACK, scope: "readonly", state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" }).toString();
    await signIn(page, user.email);
    await expect(page.getByText("Signed in as")).toBeVisible();
    const callback = await approveInBrowser(page, url);

    const params = oauth.validateAuthResponse(as, c, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(as, c, await oauth.authorizationCodeGrantRequest(as, c, auth, params, CALLBACK, verifier, insecure));
    const refreshed = await oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, auth, tokens.refresh_token!, insecure));

    const introspection = await oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, auth, refreshed.access_token, insecure));
    expect(introspection).toMatchObject({ active: true, client_id: c.client_id, username: user.email, scope: "readonly" });

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, auth, refreshed.refresh_token!, insecure));
    const after = await oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, auth, refreshed.access_token, insecure));
    expect(after.active).toBe(false);
  });

  test("password grant from discovered metadata, with client_secret_post", async () => {
    const user = newUser();
    const registered = client("password", user.email);
    const as = await oauth.processDiscoveryResponse(new URL(baseURL), await oauth.discoveryRequest(new URL(baseURL), { algorithm: "oauth2", ...insecure }));
    const c: oauth.Client = { client_id: registered.client_id };
    const tokens = await oauth.processGenericTokenEndpointResponse(
      as,
      c,
      await oauth.genericTokenEndpointRequest(as, c, oauth.ClientSecretPost(registered.client_secret!), "password", { username: user.email, password: user.password, scope: "readonly readwrite" }, insecure),
    );
    expect(tokens.scope).toBe("readonly readwrite");
    expect(tokens.token_type).toBe("bearer");
  });
});

test.describe("openid-client", () => {
  test("discovery (RFC 8414), authorization code with PKCE, refresh, introspection, revocation; a public client too", async ({ page }) => {
    const user = newUser();
    await signIn(page, user.email);
    await expect(page.getByText("Signed in as")).toBeVisible();
    // Registered before any request: the CLI runs synchronously, and a pause of more than the server's
    // keep-alive timeout between two requests of openid-client's pool made the next one fail ("other side
    // closed") on a loaded machine.
    const clients = [false, true].map((isPublic) => ({ isPublic, registered: client("authorization_code", newUser().email, CALLBACK, ...(isPublic ? ["--public"] : [])) }));
    for (const { isPublic, registered } of clients) {
      const config = await openid.discovery(new URL(baseURL), registered.client_id, registered.client_secret ?? undefined, isPublic ? openid.None() : undefined, {
        algorithm: "oauth2",
        execute: [openid.allowInsecureRequests],
      });
      const verifier = openid.randomPKCECodeVerifier();
      const state = openid.randomState();
      const url = openid.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: "readonly readwrite", state, code_challenge: await openid.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
      const callback = await approveInBrowser(page, url);
      const tokens = await openid.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
      expect(tokens.scope).toBe("readonly readwrite");
      const refreshed = await openid.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      // A used refresh token is refused exactly as RFC 6749 5.2 says.
      await expect(openid.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant", status: 400 });
      if (!isPublic) {
        const fresh = await openid.authorizationCodeGrant(config, await approveInBrowser(page, openid.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: "readonly", state, code_challenge: await openid.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" })), { pkceCodeVerifier: verifier, expectedState: state });
        expect(await openid.tokenIntrospection(config, fresh.access_token)).toMatchObject({ active: true, username: user.email });
        await openid.tokenRevocation(config, fresh.refresh_token!);
        expect((await openid.tokenIntrospection(config, fresh.access_token)).active).toBe(false);
      }
    }
  });
});

test.describe("openid-client with private_key_jwt, and the authorization endpoint by POST", () => {
  test("PrivateKeyJwt (RFC 7523) at PAR, the token endpoint, refresh, introspection and revocation, for a client made with --jwks-file", async ({ page }) => {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const file = join(mkdtempSync(join(tmpdir(), "interop-jwks-")), "client.jwks.json");
    writeFileSync(file, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "interop-1" }] }));
    const registered = client("authorization_code", newUser().email, CALLBACK, "--jwks-file", file);
    expect(registered.client_secret).toBeNull();
    const user = newUser();
    await signIn(page, user.email);
    await expect(page.getByText("Signed in as")).toBeVisible();
    const config = await openid.discovery(new URL(baseURL), registered.client_id, undefined, openid.PrivateKeyJwt({ key: privateKey, kid: "interop-1" }), { execute: [openid.allowInsecureRequests] });
    expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain("private_key_jwt");
    const verifier = openid.randomPKCECodeVerifier();
    const state = openid.randomState();
    const url = await openid.buildAuthorizationUrlWithPAR(config, { redirect_uri: CALLBACK, scope: "openid readonly", state, code_challenge: await openid.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
    expect(url.searchParams.get("request_uri")).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const callback = await approveInBrowser(page, url);
    const tokens = await openid.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ sub: String(user.id), amr: ["pwd"] });
    const refreshed = await openid.refreshTokenGrant(config, tokens.refresh_token!);
    expect(await openid.tokenIntrospection(config, refreshed.access_token)).toMatchObject({ active: true, client_id: registered.client_id });
    await openid.tokenRevocation(config, refreshed.refresh_token!);
    expect((await openid.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
    // The client has no secret to fall back on: without its assertion it is refused as RFC 6749 5.2 says.
    const keyless = await openid.discovery(new URL(baseURL), registered.client_id, undefined, openid.None(), { execute: [openid.allowInsecureRequests] });
    await expect(openid.tokenIntrospection(keyless, refreshed.access_token)).rejects.toMatchObject({ error: "invalid_client", status: 401 });
  });

  test("a client's page on another site POSTs the request (the SameSite=Lax cookie held back): signed in, the person goes on; signed out, the sign-in page", async ({ page, browser }) => {
    const registered = client("authorization_code", newUser().email);
    const config = await openid.discovery(new URL(baseURL), registered.client_id, registered.client_secret!, undefined, { execute: [openid.allowInsecureRequests] });
    const verifier = openid.randomPKCECodeVerifier();
    const state = openid.randomState();
    const authorization = openid.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: "openid readonly", state, code_challenge: await openid.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
    // 127.0.0.1 is another site than localhost: Chromium sends no SameSite=Lax cookie with this POST.
    const poster = new URL(`http://127.0.0.1:${callbackPort}/post`);
    poster.searchParams.set("action", `${authorization.origin}${authorization.pathname}`);
    for (const [name, value] of authorization.searchParams) poster.searchParams.append(name, value);

    const stranger = await browser.newContext();
    const signedOut = await stranger.newPage();
    await signedOut.goto(poster.toString());
    await expectAt(signedOut, `${baseURL}/login`);
    await stranger.close();

    const user = newUser();
    await signIn(page, user.email);
    await expect(page.getByText("Signed in as")).toBeVisible();
    // The POST came without the cookie (else it would have been answered at once, not 303).
    const posted: number[] = [];
    page.on("response", (response) => {
      if (response.request().method() === "POST" && response.url().startsWith(poster.searchParams.get("action")!)) posted.push(response.status());
    });
    const callback = await approveInBrowser(page, poster);
    expect(posted).toEqual([303]);
    const tokens = await openid.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ sub: String(user.id) });
  });
});

test.describe("simple-oauth2", () => {
  for (const [authorization, bodyFormat] of [["header", "form"], ["body", "json"], ["header", "json"], ["body", "form"]] as const) {
    test(`authorization code and refresh with ${authorization} client authentication and a ${bodyFormat} body`, async ({ page }) => {
      const user = newUser();
      const registered = client("authorization_code", newUser().email);
      const sc = new AuthorizationCode({
        client: { id: registered.client_id, secret: registered.client_secret! },
        auth: { tokenHost: baseURL, tokenPath: "/api/connect/oauth2/token/", authorizePath: "/api/connect/oauth2/auth/" },
        options: { authorizationMethod: authorization, bodyFormat },
      });
      await signIn(page, user.email);
      await expect(page.getByText("Signed in as")).toBeVisible();
      const callback = await approveInBrowser(page, sc.authorizeURL({ redirect_uri: CALLBACK, scope: "readonly", state: "simple-state" }));
      expect(callback.searchParams.get("state")).toBe("simple-state");
      const token = await sc.getToken({ code: callback.searchParams.get("code")!, redirect_uri: CALLBACK });
      expect(token.token).toMatchObject({ token_type: "Bearer", scope: "readonly", expires_in: 3600 });
      const refreshed = await token.refresh();
      expect(refreshed.token.access_token).not.toBe(token.token.access_token);
      // A replayed refresh token is a 400 invalid_grant, which simple-oauth2 raises as a Boom error.
      await expect(token.refresh()).rejects.toMatchObject({ output: { statusCode: 400 }, data: { payload: { error: "invalid_grant" } } });
    });
  }

  test("password grant (ResourceOwnerPassword) with Basic authentication", async () => {
    const user = newUser();
    const registered = client("password", user.email);
    const sc = new ResourceOwnerPassword({
      client: { id: registered.client_id, secret: registered.client_secret! },
      auth: { tokenHost: baseURL, tokenPath: "/api/connect/oauth2/token/" },
    });
    const token = await sc.getToken({ username: user.email, password: user.password, scope: "readonly" });
    expect(token.token.scope).toBe("readonly");
    await expect(sc.getToken({ username: user.email, password: "wrong password" })).rejects.toMatchObject({ output: { statusCode: 400 }, data: { payload: { error: "invalid_grant" } } });
  });
});

test.describe("a browser-only client reading the implicit fragment", () => {
  test("gets the token from its fragment and calls the API cross-origin with it (CORS preflight)", async ({ page }) => {
    const user = newUser();
    const spa = `http://localhost:${callbackPort}/spa`;
    const registered = client("implicit", newUser().email, spa);
    await signIn(page, user.email);
    await expect(page.getByText("Signed in as")).toBeVisible();
    const url = `${baseURL}/api/connect/oauth2/auth/?response_type=token&client_id=${registered.client_id}&scope=readonly&state=spa-state`;
    await approveInBrowser(page, url, spa);
    const result = await page.evaluate(() => (window as unknown as { implicitResult: Record<string, string> }).implicitResult);
    expect(result).toMatchObject({ token_type: "Bearer", state: "spa-state", expires_in: "3600", scope: "readonly", iss: baseURL });
    expect(page.url()).toBe(spa);
    const me = await page.evaluate(
      async ([api, token]) => {
        const res = await fetch(api!, { headers: { Authorization: `Bearer ${token}` } });
        return { status: res.status, body: await res.json() };
      },
      [`${baseURL}/api/user/${user.id}/`, result.access_token],
    );
    expect(me).toEqual({ status: 200, body: { id: user.id, resource_uri: `/api/user/${user.id}/`, name: user.name, email: user.email } });
  });
});

test.describe("OpenID Connect, the device flow and client credentials", () => {
  test("openid-client from the issuer URL alone: code + PKCE + nonce, the id_token validated (signature against the JWKS), UserInfo", async ({ page }) => {
    const user = newUser("Ida Interop");
    const registered = client("authorization_code", newUser().email);
    // Discovery from nothing but the issuer: /.well-known/openid-configuration (openid-client's default).
    const config = await openid.discovery(new URL(baseURL), registered.client_id, registered.client_secret!, undefined, { execute: [openid.allowInsecureRequests] });
    openid.enableNonRepudiationChecks(config);
    expect(config.serverMetadata()).toMatchObject({ issuer: baseURL, userinfo_endpoint: `${baseURL}/api/connect/oauth2/userinfo/`, jwks_uri: `${baseURL}/api/connect/oauth2/jwks/` });

    await signIn(page, user.email);
    await expect(page.getByText("Signed in as")).toBeVisible();
    const verifier = openid.randomPKCECodeVerifier();
    const state = openid.randomState();
    const nonce = openid.randomNonce();
    const url = openid.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: "openid profile email", state, nonce, code_challenge: await openid.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
    const callback = await approveInBrowser(page, url);
    const tokens = await openid.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: baseURL, sub: String(user.id), aud: registered.client_id, nonce, name: "Ida Interop", email: user.email });
    expect(typeof claims.auth_time).toBe("number");
    expect(typeof claims.at_hash).toBe("string");

    const userinfo = await openid.fetchUserInfo(config, tokens.access_token, claims.sub);
    // email_verified says whether the address was confirmed (docs/rules/openid-connect.md#scopes-and-claims);
    // either way it is a boolean.
    expect(userinfo).toEqual({ sub: String(user.id), name: "Ida Interop", email: user.email, email_verified: expect.any(Boolean) });

    // A refresh brings a new id_token for the same person, validated the same way.
    const refreshed = await openid.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()).toMatchObject({ sub: String(user.id), auth_time: claims.auth_time, nonce });
  });

  test("openid-client: buildEndSessionUrl from discovery; the id_token_hint signs the browser out and comes back with state (docs/rules/openid-connect.md#logout)", async ({ page }) => {
    const user = newUser("Lou Logout");
    const signedOut = CALLBACK.replace("/callback", "/signed-out");
    const registered = client("authorization_code", newUser().email, CALLBACK, "--post-logout-redirect-uri", signedOut);
    const config = await openid.discovery(new URL(baseURL), registered.client_id, registered.client_secret!, undefined, { execute: [openid.allowInsecureRequests] });
    expect(config.serverMetadata()).toMatchObject({ end_session_endpoint: `${baseURL}/api/connect/oauth2/logout/`, backchannel_logout_supported: true, backchannel_logout_session_supported: true });

    await signIn(page, user.email);
    await expect(page.getByText("Signed in as")).toBeVisible();
    const verifier = openid.randomPKCECodeVerifier();
    const state = openid.randomState();
    const url = openid.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: "openid", state, code_challenge: await openid.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
    const tokens = await openid.authorizationCodeGrant(config, await approveInBrowser(page, url), { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(typeof tokens.claims()!.sid).toBe("string");

    const logoutState = openid.randomState();
    const endSession = openid.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: signedOut, state: logoutState });
    expect(endSession.origin + endSession.pathname).toBe(`${baseURL}/api/connect/oauth2/logout/`);
    await page.goto(endSession.href);
    await expect(page.getByText("callback reached")).toBeVisible();
    const landed = new URL(page.url());
    expect(landed.origin + landed.pathname).toBe(signedOut);
    expect(landed.searchParams.get("state")).toBe(logoutState);
    await page.goto("/");
    await expect(page.getByText("Signed in as")).toHaveCount(0);
  });

  test("oauth4webapi: the device flow, with the code typed into /device in Chromium", async ({ page }) => {
    const insecure = { [oauth.allowInsecureRequests]: true };
    const user = newUser("Devi Device");
    const registered = client("device_code", newUser().email, CALLBACK, "--public");
    const as = await oauth.processDiscoveryResponse(new URL(baseURL), await oauth.discoveryRequest(new URL(baseURL), { algorithm: "oidc", ...insecure }));
    const c: oauth.Client = { client_id: registered.client_id };
    const auth = oauth.None();
    const device = await oauth.processDeviceAuthorizationResponse(as, c, await oauth.deviceAuthorizationRequest(as, c, auth, new URLSearchParams({ scope: "openid readonly" }), insecure));
    expect(device.verification_uri).toBe(`${baseURL}/device`);

    // The device polls as RFC 8628 3.5 says while the person types the code in a browser.
    const seen: string[] = [];
    const poll = async () => {
      let interval = device.interval ?? 5;
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, interval * 1000));
        const response = await oauth.deviceCodeGrantRequest(as, c, auth, device.device_code, insecure);
        try {
          return await oauth.processDeviceCodeResponse(as, c, response);
        } catch (error) {
          if (!(error instanceof oauth.ResponseBodyError)) throw error;
          seen.push(error.error);
          if (error.error === "slow_down") interval += 5;
          else if (error.error !== "authorization_pending") throw error;
        }
      }
    };
    const polling = poll();
    await signIn(page, user.email);
    await expect(page.getByText("Signed in as")).toBeVisible();
    // Wait for the device's first poll, so that the flow sees authorization_pending before the approval.
    await expect.poll(() => seen.length, { timeout: 20_000 }).toBeGreaterThan(0);
    await page.goto("/device");
    await page.getByLabel("Code").fill(device.user_code);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("button", { name: "Approve" }).click();
    await expect(page.getByText("it may continue")).toBeVisible();
    const tokens = await polling;
    expect(seen[0]).toBe("authorization_pending");
    expect(tokens).toMatchObject({ token_type: "bearer", scope: "readonly openid" });
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ sub: String(user.id), aud: registered.client_id, iss: baseURL });

    const me = await fetch(`${baseURL}/api/user/${user.id}/`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(200);
  });

  test("oauth4webapi: client credentials from discovered metadata, the token acting for the client's owner", async () => {
    const insecure = { [oauth.allowInsecureRequests]: true };
    const owner = newUser("Sam Service");
    const registered = client("client_credentials", owner.email);
    const as = await oauth.processDiscoveryResponse(new URL(baseURL), await oauth.discoveryRequest(new URL(baseURL), { algorithm: "oauth2", ...insecure }));
    expect(as.grant_types_supported).toContain("client_credentials");
    const c: oauth.Client = { client_id: registered.client_id };
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      c,
      await oauth.clientCredentialsGrantRequest(as, c, oauth.ClientSecretBasic(registered.client_secret!), new URLSearchParams({ scope: "readonly" }), insecure),
    );
    expect(tokens).toMatchObject({ token_type: "bearer", scope: "readonly", expires_in: 3600 });
    expect(tokens.refresh_token).toBeUndefined();
    const me = await fetch(`${baseURL}/api/user/${owner.id}/`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(await me.json()).toMatchObject({ id: owner.id, email: owner.email });
  });
});

test.describe("oauth4webapi from a URL", () => {
  const insecure = { [oauth.allowInsecureRequests]: true };

  // docs/rules/tokens.md#dynamic-registration and docs/api.md: an MCP-style client that knows only
  // the API's URL finds, registers with, authorizes against and calls the service, unchanged.
  test("from the API's URL alone: 401, resource metadata, server metadata, registration, PAR, code with PKCE, DPoP-bound token, API call", async ({ page }) => {
    const user = newUser();
    const apiUrl = new URL(`${baseURL}/api`);
    // 1. A call without a token: the 401 names the resource metadata.
    const first = await fetch(`${apiUrl}/bundle/`);
    expect(first.status).toBe(401);
    const challenge = first.headers.get("www-authenticate")!;
    expect(challenge).toContain("DPoP ");
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    expect(metadataUrl).toBe(`${baseURL}/.well-known/oauth-protected-resource/api`);
    // 2. Protected resource metadata (RFC 9728), 3. authorization server metadata (RFC 8414).
    const rs = await oauth.processResourceDiscoveryResponse(apiUrl, await oauth.resourceDiscoveryRequest(apiUrl, insecure));
    expect(rs.dpop_signing_alg_values_supported).toContain("ES256");
    const issuer = new URL(rs.authorization_servers![0]!);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
    expect(as.registration_endpoint).toBe(`${baseURL}/api/connect/oauth2/register/`);
    // 4. Registration (RFC 7591) with an initial access token from the administrator.
    const { token: initialAccessToken } = cli<{ token: string; expires_at: string }>("registration:token");
    const c = (await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: "Agent from a URL", redirect_uris: [CALLBACK], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] },
        { initialAccessToken, ...insecure },
      ),
    )) as oauth.Client;
    expect(c.client_id).toEqual(expect.any(String));
    // 5. PAR (RFC 9126), with PKCE and the resource (RFC 8707).
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const pushed = await oauth.processPushedAuthorizationResponse(
      as,
      c,
      await oauth.pushedAuthorizationRequest(as, c, oauth.None(), { response_type: "code", redirect_uri: CALLBACK, scope: "readonly", state, resource: rs.resource, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" }, insecure),
    );
    expect(pushed.expires_in).toBe(60);
    // 6. The person signs in and approves in Chromium.
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: c.client_id, request_uri: pushed.request_uri }).toString();
    await signIn(page, user.email);
    await expect(page.getByText("Signed in as")).toBeVisible();
    const callback = await approveInBrowser(page, url);
    // 7. The code for a DPoP-bound token (RFC 9449).
    const dpop = oauth.DPoP(c, await oauth.generateKeyPair("ES256"));
    const params = oauth.validateAuthResponse(as, c, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(as, c, await oauth.authorizationCodeGrantRequest(as, c, oauth.None(), params, CALLBACK, verifier, { DPoP: dpop, ...insecure }));
    expect(tokens.token_type).toBe("dpop");
    // 8. The API call with the token and a proof.
    const me = await oauth.protectedResourceRequest(tokens.access_token, "GET", new URL(`${baseURL}/api/user/${user.id}/`), undefined, undefined, { DPoP: dpop, ...insecure });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id: user.id, email: user.email });
    // A refresh with the same key rotates; the bound token sent as Bearer is refused.
    const refreshed = await oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, oauth.None(), tokens.refresh_token!, { DPoP: dpop, ...insecure }));
    expect(refreshed.token_type).toBe("dpop");
    const stolen = await fetch(`${baseURL}/api/user/${user.id}/`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(stolen.status).toBe(401);
    expect(stolen.headers.get("www-authenticate")).toContain('DPoP realm="api", algs="ES256 RS256"');
    expect(stolen.headers.get("www-authenticate")).toMatch(/DPoP [^]*error="invalid_token"/);
  });
});
