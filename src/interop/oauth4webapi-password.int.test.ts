// oauth4webapi, a strict, independent OAuth 2 client, drives the password and refresh grants over real HTTP
// against the app's own route handlers. It checks the token response to the letter (token_type, expires_in,
// scope as a string, JSON content type), so a deviation from RFC 6749 fails here.
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClient, makeUser } from "@/testing/factories";
import { startServer } from "@/testing/app";

let server: Awaited<ReturnType<typeof startServer>>;
let as: oauth.AuthorizationServer;
const insecure = { [oauth.allowInsecureRequests]: true };

beforeAll(async () => {
  server = await startServer();
  as = { issuer: server.url, token_endpoint: `${server.url}/api/connect/oauth2/token/` };
});
afterAll(() => server.close());

async function setup() {
  const user = await makeUser();
  const registered = await makeClient({ ownerId: user.id, grantType: "password" });
  const client: oauth.Client = { client_id: registered.client_id };
  return { user, client, secret: registered.client_secret! };
}

describe("oauth4webapi against the token endpoint", () => {
  it.each([
    ["client_secret_post", oauth.ClientSecretPost],
    ["client_secret_basic", oauth.ClientSecretBasic],
  ])("password grant and two refresh rotations with %s", async (_name, auth) => {
    const { user, client, secret } = await setup();
    const clientAuth = auth(secret);
    const params = new URLSearchParams({ username: user.email, password: user.password, scope: "readonly readwrite" });
    const first = await oauth.processGenericTokenEndpointResponse(
      as,
      client,
      await oauth.genericTokenEndpointRequest(as, client, clientAuth, "password", params, insecure),
    );
    expect(first.token_type).toBe("bearer");
    expect(first.expires_in).toBe(3600);
    expect(first.scope).toBe("readonly readwrite");
    expect(typeof first.refresh_token).toBe("string");

    const second = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, first.refresh_token!, insecure),
    );
    expect(second.access_token).not.toBe(first.access_token);
    const third = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, second.refresh_token!, insecure),
    );
    expect(third.refresh_token).not.toBe(second.refresh_token);

    // The access token works as a bearer token through oauth4webapi's protected resource request.
    const resource = await oauth.protectedResourceRequest(third.access_token, "GET", new URL(`${server.url}/api/user/${user.id}/`), undefined, undefined, insecure);
    expect(resource.status).toBe(200);
    expect(await resource.json()).toMatchObject({ id: user.id, email: user.email });
  });

  it("surfaces RFC 6749 errors as ResponseBodyError: a replayed refresh token is invalid_grant", async () => {
    const { user, client, secret } = await setup();
    const clientAuth = oauth.ClientSecretPost(secret);
    const params = new URLSearchParams({ username: user.email, password: user.password });
    const first = await oauth.processGenericTokenEndpointResponse(as, client, await oauth.genericTokenEndpointRequest(as, client, clientAuth, "password", params, insecure));
    await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, first.refresh_token!, insecure));
    const replay = oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, first.refresh_token!, insecure));
    await expect(replay).rejects.toBeInstanceOf(oauth.ResponseBodyError);
    await expect(replay).rejects.toMatchObject({ error: "invalid_grant", status: 400 });
  });

  it("surfaces a wrong password as invalid_grant and a wrong secret as invalid_client", async () => {
    const { user, client, secret } = await setup();
    const wrongPassword = oauth.processGenericTokenEndpointResponse(
      as,
      client,
      await oauth.genericTokenEndpointRequest(as, client, oauth.ClientSecretPost(secret), "password", new URLSearchParams({ username: user.email, password: "nope-nope" }), insecure),
    );
    await expect(wrongPassword).rejects.toMatchObject({ error: "invalid_grant", status: 400 });
    const wrongSecret = oauth.processGenericTokenEndpointResponse(
      as,
      client,
      await oauth.genericTokenEndpointRequest(as, client, oauth.ClientSecretBasic("wrong"), "password", new URLSearchParams({ username: user.email, password: user.password }), insecure),
    );
    // RFC 6749 5.2: a failed Basic authentication carries a WWW-Authenticate challenge, which
    // oauth4webapi reports as such.
    await expect(wrongSecret).rejects.toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    await expect(wrongSecret).rejects.toMatchObject({ status: 401, cause: [{ scheme: "basic", parameters: { realm: "oauth" } }] });
  });
});
