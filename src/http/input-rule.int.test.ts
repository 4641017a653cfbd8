// The input rule (src/http/input-text.ts, docs/rules/endpoints.md#input-text) at every endpoint, through the
// production dispatcher on the suite's database (SQLite, and PostgreSQL, where text cannot hold U+0000): a NUL
// byte or another control character in any parameter is a 400 naming the field (invalid_request on OAuth
// endpoints, invalid_client_metadata at registration, the error page or the error redirect at the
// authorization endpoint), never a 500 and never logged as an unexpected error; names a person reads also
// refuse format (bidi) and line-break characters.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/http/errors";
import { setEnvForTests, type Env } from "@/env";
import { createBundle } from "@/bundles/create-bundle";
import { createClient } from "@/clients/create-client";
import { s256 } from "@/oauth/pkce";
import { db } from "@/db/client";
import { createUser } from "@/users/create-user";
import { call } from "@/testing/app";
import { makeClient, makeUser, passwordSession, uniqueEmail } from "@/testing/factories";
import { captureLog } from "@/testing/log-capture";
import { sessionCookie } from "@/testing/session";

const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://client.example.test/callback";
const UNREADABLE = "must not contain control, format (such as bidi) or line-break characters";

let session: Awaited<ReturnType<typeof passwordSession>>;
let codeClient: Awaited<ReturnType<typeof makeClient>>;
let deviceClient: Awaited<ReturnType<typeof makeClient>>;
let cookie: string;
let previous: Partial<Env>;
let errorLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  previous = setEnvForTests({ registration: "open", logLevel: "info" });
  session = await passwordSession();
  codeClient = await makeClient({ ownerId: session.user.id, grantType: "authorization_code", firstParty: true });
  deviceClient = await makeClient({ ownerId: session.user.id, grantType: "device_code", isPublic: true, redirectUris: [] });
  cookie = await sessionCookie(session.user);
});
afterAll(() => setEnvForTests(previous));
afterEach(() => {
  // Nothing a client sent is an unexpected error (a 500 with a stack in the log).
  expect(errorLines).toEqual([]);
  errorLines = [];
});

/** call(), collecting the log lines at error level the request wrote. */
async function send(...args: Parameters<typeof call>) {
  const { result, lines } = await captureLog(() => call(...args));
  errorLines.push(...lines.filter((line) => line.level === "error"));
  return result;
}

const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
});
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

function expectOAuth400(response: Awaited<ReturnType<typeof call>>, code = "invalid_request") {
  expect(response.status, response.text).toBe(400);
  expect(response.json).toEqual({ error: code });
}

describe("a NUL byte (or another control character) in a parameter: a 400, never a 500", () => {
  it("the token endpoint: in client_id (form, JSON, Basic), in any other parameter, in a nested JSON value or a key", async () => {
    const c = session.client;
    expectOAuth400(await send("POST", TOKEN, form({ grant_type: "client_credentials", client_id: "x\u0000", client_secret: "s" })));
    expectOAuth400(await send("POST", TOKEN, { body: { grant_type: "password", client_id: `${c.client_id}\u0000`, client_secret: c.client_secret } }));
    expectOAuth400(await send("POST", TOKEN, form({ grant_type: "client_credentials" }, { authorization: basic("\u0000", "s") })));
    expectOAuth400(await send("POST", TOKEN, form({ grant_type: "client_credentials" }, { authorization: basic(c.client_id, "se\u0000cret") })));
    expectOAuth400(await send("POST", TOKEN, form({ grant_type: "password", client_id: c.client_id, client_secret: c.client_secret!, username: "\u0000@x.test", password: "p" })));
    expectOAuth400(await send("POST", TOKEN, form({ grant_type: "refresh_token", client_id: c.client_id, client_secret: c.client_secret!, refresh_token: "\u0000" })));
    expectOAuth400(await send("POST", TOKEN, form({ grant_type: "client_credentials\u007f", client_id: c.client_id, client_secret: c.client_secret! })));
    expectOAuth400(await send("POST", TOKEN, { body: { grant_type: "client_credentials", client_id: c.client_id, client_secret: c.client_secret, extra: { list: ["ok", "\u001b[31m"] } } }));
    expectOAuth400(await send("POST", TOKEN, { body: { grant_type: "client_credentials", client_id: c.client_id, client_secret: c.client_secret, "k\u0000": "v" } }));
    expectOAuth400(await send("POST", TOKEN, { raw: `{"grant_type":"password","client_id":"\\u0000"}`, headers: { "content-type": "text/plain" } }));
  });

  it("revocation and introspection", async () => {
    const c = session.client;
    expectOAuth400(await send("POST", "/api/connect/oauth2/revoke/", form({ token: "t", client_id: "\u0000" })));
    expectOAuth400(await send("POST", "/api/connect/oauth2/revoke/", form({ token: "t\u0000", client_id: c.client_id, client_secret: c.client_secret! })));
    expectOAuth400(await send("POST", "/api/connect/oauth2/introspect/", form({ token: "t" }, { authorization: basic("a\u0000", "s") })));
  });

  it("the device authorization endpoint and PAR", async () => {
    expectOAuth400(await send("POST", "/api/connect/oauth2/device/", form({ client_id: "\u0000", scope: "readonly" })));
    expectOAuth400(await send("POST", "/api/connect/oauth2/device/", form({ client_id: deviceClient.client_id, scope: "readonly\u0000" })));
    const pushed = { response_type: "code", client_id: codeClient.client_id, client_secret: codeClient.client_secret!, redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256("v".repeat(64)), code_challenge_method: "S256" };
    expect((await send("POST", "/api/connect/oauth2/par/", form(pushed))).status).toBe(201);
    expectOAuth400(await send("POST", "/api/connect/oauth2/par/", form({ ...pushed, client_id: `${codeClient.client_id}\u0000` })));
    expectOAuth400(await send("POST", "/api/connect/oauth2/par/", form({ ...pushed, state: "a\u0001b" })));
    expectOAuth400(await send("POST", "/api/connect/oauth2/par/", form({ ...pushed, redirect_uri: `${REDIRECT}\u0000` })));
  });

  it("dynamic registration (invalid_client_metadata) and its management path (invalid_request)", async () => {
    const metadata = { client_name: "Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" };
    expectOAuth400(await send("POST", "/api/connect/oauth2/register/", { body: { ...metadata, client_name: "A\u0000" } }), "invalid_client_metadata");
    expectOAuth400(await send("POST", "/api/connect/oauth2/register/", { body: { ...metadata, redirect_uris: [`${REDIRECT}\u0000`] } }), "invalid_client_metadata");
    expectOAuth400(await send("POST", "/api/connect/oauth2/register/", { body: { ...metadata, logo_uri: "https://x.test/\u0000" } }), "invalid_client_metadata");
    expectOAuth400(await send("GET", "/api/connect/oauth2/register/%00/", { token: "any" }));
    expectOAuth400(await send("DELETE", "/api/connect/oauth2/register/a%01b/", { token: "any" }));
  });

  it("the bundle endpoints and the other /api resources: a sentence naming the field, in a body, a query or a path", async () => {
    const bearer = session.accessToken;
    const sentence = async (method: string, path: string, field: string, body?: unknown) => {
      const response = await send(method, path, { token: bearer, ...(body === undefined ? {} : { body }) });
      expect(response.status, `${method} ${path}: ${response.text}`).toBe(400);
      expect(response.json).toEqual({ error: `${field}: must not contain control characters` });
    };
    await sentence("POST", "/api/bundle/", "name", { name: "a\u0000b" });
    await sentence("POST", "/api/bundle/", "meta.tags.1", { name: "fine", meta: { tags: ["x", "\u0000"] } });
    await sentence("GET", "/api/bundle/%00/", "id");
    await sentence("DELETE", "/api/bundle/1%00/", "id");
    await sentence("GET", "/api/bundle/?limit=%00", "limit");
    await sentence("GET", "/api/bundle/?x%00=1", "x\\u0000");
    await sentence("GET", "/api/user/%00/", "id");
    await sentence("GET", "/api/bundle_permission/%1f/", "id");
    await sentence("POST", "/api/bundle_permission/", "bundle", { bundle: "/api/bundle/1/\u0000", user: "/api/user/1/" });
    await sentence("POST", "/api/bundle_permission_request/", "user_allowed", { bundle: "/api/bundle/1/", user_allowed: "\u0000", user_target: "/api/user/1/" });
    await sentence("GET", "/api/bundle_permission_request/%00/", "key");
    await sentence("DELETE", "/api/oauth2token/%00/", "token");
    await sentence("DELETE", "/api/accesstoken/%00/", "token");
    expect((await send("POST", "/api/bundle/", { token: bearer, body: { name: "Zoë's bundle 😀\tok" } })).status).toBe(400); // a tab is C0 too
    expect((await send("POST", "/api/bundle/", { token: bearer, body: { name: "Zoë's bundle 😀" } })).status).toBe(201);
  });

  describe("the authorization endpoint", () => {
    const AUTH = "/api/connect/oauth2/auth/";
    const query = (extra: Record<string, string>) =>
      `${AUTH}?${new URLSearchParams({ response_type: "code", client_id: codeClient.client_id, redirect_uri: REDIRECT, scope: "readonly", state: "st", code_challenge: s256("v".repeat(64)), code_challenge_method: "S256", ...extra })}`;
    const expectPage = (response: Awaited<ReturnType<typeof call>>) => {
      expect(response.status, response.text.slice(0, 200)).toBe(400);
      expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      expect(response.headers.get("location")).toBeNull();
      expect(response.text).toContain("invalid_request");
    };

    it("before the redirect URI is known (client_id, redirect_uri, request_uri, response_type): the error page, never a redirect", async () => {
      const spoilt: Array<Record<string, string>> = [{ client_id: "\u0000" }, { client_id: `${codeClient.client_id}\u0000` }, { redirect_uri: `${REDIRECT}\u0000` }, { request_uri: "urn:x\u0001" }, { response_type: "code\u0000" }];
      for (const extra of spoilt) {
        expectPage(await send("GET", query(extra), { headers: { cookie } }));
      }
    });

    it("anywhere else: invalid_request by the endpoint's rules: the error page signed out, the error redirect signed in", async () => {
      const spoilt: Array<Record<string, string>> = [{ scope: "readonly\u0000" }, { code_challenge: "\u0000" }, { nonce: "n\u001f" }, { unknown: "\u0000" }];
      for (const extra of spoilt) {
        expectPage(await send("GET", query(extra)));
        const redirected = await send("GET", query(extra), { headers: { cookie } });
        expect(redirected.status).toBe(302);
        const location = new URL(redirected.headers.get("location")!);
        expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
        expect(location.searchParams.get("error")).toBe("invalid_request");
        expect(location.searchParams.get("state")).toBe("st");
      }
      // And the same request without them goes on as usual (to the client with a code).
      const fine = await send("GET", query({}), { headers: { cookie } });
      expect(new URL(fine.headers.get("location")!).searchParams.get("code")).toBeTruthy();
    });
  });
});

describe("names a person reads refuse format (bidi) and line-break characters: a 400 naming the field", () => {
  const disguised = ["Goo\u202egle", "Goo\u2066gle", "Goo\u200bgle", "\ufeffGoogle", "Goo\u2028gle", "Goo\u0085gle", "Goo\ngle", "Goo\u0000gle"];

  it("client_name at registration: invalid_client_metadata, nothing registered", async () => {
    for (const name of disguised) {
      expectOAuth400(await send("POST", "/api/connect/oauth2/register/", { body: { client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" } }), "invalid_client_metadata");
    }
    expect(await (await db()).client.count({ where: { name: { startsWith: "Goo" } } })).toBe(0);
    const fine = await send("POST", "/api/connect/oauth2/register/", { body: { client_name: "  Zoë's agent 😀  ", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" } });
    expect(fine.status).toBe(201);
    expect(fine.json).toMatchObject({ client_name: "Zoë's agent 😀" });
  });

  it("a bundle's name through the API", async () => {
    for (const name of disguised) {
      const response = await send("POST", "/api/bundle/", { token: session.accessToken, body: { name } });
      expect(response.status).toBe(400);
      expect(response.json?.error).toMatch(/^name: must not contain control/);
    }
    expect((await send("POST", "/api/bundle/", { token: session.accessToken, body: { name: "Goo\u202egle" } })).json).toEqual({ error: `name: ${UNREADABLE}` });
  });

  /** The 400 a domain function throws (what the CLI prints and the settings page shows). */
  async function refusal(fn: () => Promise<unknown>): Promise<string> {
    const error = await fn().then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).error;
  }

  it("a client's name (and redirect URIs) from the CLI and the settings page (createClient), a user's name, a bundle's name (createBundle)", async () => {
    for (const name of disguised) {
      expect(await refusal(() => createClient({ ownerId: session.user.id, name, grantType: "password" }))).toBe(`name: ${UNREADABLE}`);
      expect(await refusal(() => createUser({ email: uniqueEmail(), password: "long enough password", name }))).toBe(`name: ${UNREADABLE}`);
      expect(await refusal(() => createBundle({ ownerId: session.user.id, name }))).toBe(`name: ${UNREADABLE}`);
    }
    // A redirect URI typed in the settings page's form or given to the CLI: the same rule.
    expect(await refusal(() => createClient({ ownerId: session.user.id, name: "App", grantType: "authorization_code", redirectUris: [REDIRECT, `${REDIRECT}\u0000x`] }))).toBe("redirect_uris.1: must not contain control characters");
    const user = await makeUser({ name: "  Zoë Ångström  " });
    expect(user.name).toBe("Zoë Ångström");
  });
});

describe("web sign-in (next-auth's credentials provider)", () => {
  it("an e-mail or password holding a NUL byte is a failed sign-in, not an error", async () => {
    const { authOptions } = await import("@/auth/options");
    const provider = authOptions().providers[0] as unknown as { options: { authorize: (credentials: Record<string, string>, request: unknown) => Promise<unknown> } };
    const authorize = (email: string, password: string) => provider.options.authorize({ email, password }, { headers: {} });
    expect(await authorize(`${session.user.email}\u0000`, session.user.password)).toBeNull();
    expect(await authorize(session.user.email, `${session.user.password}\u0000`)).toBeNull();
    expect(await authorize(session.user.email, session.user.password)).toMatchObject({ email: session.user.email });
  });
});
