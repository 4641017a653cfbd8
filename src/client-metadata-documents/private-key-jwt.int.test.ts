// A client named by its metadata document that authenticates with private_key_jwt by the document's `jwks`
// (RFC 7523 2.2, draft-ietf-oauth-client-id-metadata-document; docs/rules/tokens.md#client-id-metadata-documents,
// docs/rules/tokens.md#client-assertions), against the real route handlers, database and network: a local
// server this test controls serves the documents (CLIENT_ID_METADATA_INSECURE_ORIGIN). The authorization-code
// flow end to end with assertions, and the checks of a registered client's assertions: single-use jti, aud,
// exp, the key; a document without keys, or with unusable ones, refused.
import http from "node:http";
import { randomBytes, randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { setEnvForTests, type Env } from "@/env";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { s256 } from "@/oauth/pkce";
import { metadataDocumentClient, MetadataDocumentError } from "@/client-metadata-documents/document-client";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const ISS = "http://localhost:3000";
const AUTH = "/api/connect/oauth2/auth/";
const TOKEN = "/api/connect/oauth2/token/";
const REDIRECT = "https://agent.example.test/callback";
const VERIFIER = "metadata-document-jwt-verifier-".padEnd(64, "v");
const TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

const documents = new Map<string, unknown>();
let server: http.Server;
let origin = "";
let previous: Partial<Env>;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const body = documents.get(request.url!);
    if (body === undefined) return void response.writeHead(404, { "content-type": "application/json" }).end("{}");
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  previous = setEnvForTests({ clientIdMetadata: true, clientIdMetadataInsecureOrigin: origin });
});
afterAll(async () => {
  setEnvForTests(previous);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => resetClock());

type Key = { privateKey: CryptoKey; jwk: JWK; alg: "RS256" | "ES256" };
async function keyPair(alg: "RS256" | "ES256", kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid }, alg };
}
const ec = keyPair("ES256", "agent-1");
const impostor = keyPair("ES256", "agent-1"); // the same kid, another key

/** A client_id on the test server serving `document` (with the client_id filled in). */
function serve(extra: Record<string, unknown>): string {
  const clientId = `${origin}/jwt-agent-${randomBytes(6).toString("hex")}.json`;
  documents.set(new URL(clientId).pathname, { client_id: clientId, client_name: "Keyed Agent", redirect_uris: [REDIRECT], ...extra });
  return clientId;
}
const keyedDocument = async () => serve({ token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [(await ec).jwk] } });

async function assertion(clientId: string, options: { key?: Key; claims?: Record<string, unknown> } = {}) {
  const key = options.key ?? (await ec);
  const seconds = Math.floor(nowMs() / 1000);
  return new SignJWT({ iss: clientId, sub: clientId, aud: ISS, jti: randomUUID(), iat: seconds, exp: seconds + 60, ...options.claims })
    .setProtectedHeader({ alg: key.alg, kid: key.jwk.kid })
    .sign(key.privateKey);
}

const authenticated = (jwt: string) => ({ client_assertion_type: TYPE, client_assertion: jwt });
/** A refresh with an unknown refresh token: invalid_grant once the client is authenticated, invalid_client before. */
const probe = (fields: Record<string, string>) => call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: "unknown", ...fields } });

async function refusal(clientId: string): Promise<string> {
  try {
    await metadataDocumentClient(clientId);
  } catch (error) {
    if (error instanceof MetadataDocumentError) return error.message;
    throw error;
  }
  throw new Error(`${clientId} was accepted`);
}

describe("private_key_jwt for a client named by its metadata document", () => {
  it("the code flow: the client's row keeps the document's keys, and its assertions get and refresh tokens", async () => {
    const clientId = await keyedDocument();
    const user = await makeUser();
    const cookie = await sessionCookie(user);
    const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256(VERIFIER), code_challenge_method: "S256" });
    const auth = await call("GET", `${AUTH}?${query}`, { headers: { cookie } });
    expect(auth.status).toBe(302);
    const sealed = new URL(auth.headers.get("location")!, ISS).searchParams.get("request")!;
    const row = await (await db()).client.findUnique({ where: { clientId } });
    expect(row).toMatchObject({ isPublic: false, tokenEndpointAuthMethod: "private_key_jwt", registeredVia: "metadata_document", secretDigest: null });
    expect(JSON.parse(row!.jwks!)).toEqual({ keys: [{ kty: "EC", crv: "P-256", x: (await ec).jwk.x, y: (await ec).jwk.y, alg: "ES256", kid: "agent-1" }] });

    const decided = await call("POST", "/consent/decide", {
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie },
      raw: new URLSearchParams({ request: sealed, csrf: consentCsrfToken(user.id, sealed), decision: "approve" }).toString(),
    });
    const code = new URL(decided.headers.get("location")!).searchParams.get("code")!;
    const exchange = { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER };
    // The client_id alone no longer identifies it: it is not public.
    const bare = await call("POST", TOKEN, { body: { ...exchange, client_id: clientId } });
    expect(bare.status).toBe(401);
    expect(bare.json).toEqual({ error: "invalid_client" });
    const tokens = await call("POST", TOKEN, { body: { ...exchange, ...authenticated(await assertion(clientId)) } });
    expect(tokens.status).toBe(200);
    expect(tokens.json).toMatchObject({ token_type: "Bearer", scope: "readonly", user: `/api/user/${user.id}/` });
    const refreshed = await call("POST", TOKEN, {
      body: { grant_type: "refresh_token", refresh_token: (tokens.json as { refresh_token: string }).refresh_token, ...authenticated(await assertion(clientId, { claims: { aud: `${ISS}${TOKEN}` } })) },
    });
    expect(refreshed.status).toBe(200);
  });

  it("a jti is used once: the same assertion again is invalid_client", async () => {
    const clientId = await keyedDocument();
    const jwt = await assertion(clientId);
    expect((await probe(authenticated(jwt))).json).toEqual({ error: "invalid_grant" });
    const replayed = await probe(authenticated(jwt));
    expect(replayed.status).toBe(401);
    expect(replayed.json).toEqual({ error: "invalid_client" });
  });

  it("an assertion signed by another key (with the document key's kid), for another audience, expired or with exp too far ahead is invalid_client", async () => {
    const clientId = await keyedDocument();
    const refused = [
      await assertion(clientId, { key: await impostor }),
      await assertion(clientId, { claims: { aud: "https://elsewhere.example/" } }),
      await assertion(clientId, { claims: { exp: Math.floor(nowMs() / 1000) + 3600 } }),
    ];
    for (const jwt of refused) {
      const answer = await probe(authenticated(jwt));
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({ error: "invalid_client" });
    }
    const soonStale = await assertion(clientId);
    advanceClock(120_000);
    expect((await probe(authenticated(soonStale))).json).toEqual({ error: "invalid_client" });
    // And none of these used anything up: a good one still works.
    expect((await probe(authenticated(await assertion(clientId)))).json).toEqual({ error: "invalid_grant" });
  });

  it("a secret from it is invalid_client", async () => {
    const clientId = await keyedDocument();
    const answer = await probe({ client_id: clientId, client_secret: "guess" });
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ error: "invalid_client" });
  });

  it("a private_key_jwt document without jwks, or with keys that are not usable, is refused: invalid_client", async () => {
    const withoutKeys = serve({ token_endpoint_auth_method: "private_key_jwt" });
    const jwt = await assertion(withoutKeys);
    const answer = await probe(authenticated(jwt));
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ error: "invalid_client" });
    expect(await refusal(withoutKeys)).toBe("token_endpoint_auth_method private_key_jwt needs jwks");

    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    expect(await refusal(serve({ token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [privateJwk] } }))).toBe("jwks: keys.0: holds the private member d; send public keys only");
    expect(await refusal(serve({ token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [{ kty: "oct", k: "c2VjcmV0" }] } }))).toMatch(/^jwks: keys\.0/);
  });

  it("a public document's jwks are not kept: an assertion from it is invalid_client", async () => {
    const clientId = serve({ jwks: { keys: [(await ec).jwk] } });
    const answer = await probe(authenticated(await assertion(clientId)));
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ error: "invalid_client" });
    expect(await (await db()).client.findUnique({ where: { clientId } })).toMatchObject({ isPublic: true, tokenEndpointAuthMethod: "none", jwks: null });
  });
});
