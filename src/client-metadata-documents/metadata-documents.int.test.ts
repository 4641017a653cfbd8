// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document,
// docs/rules/tokens.md#client-id-metadata-documents) against the real route handlers, database and network:
// a local server this test controls plays the client, reached through CLIENT_ID_METADATA_INSECURE_ORIGIN.
// Every fetch rule (https only, no redirects, public addresses only and no connection to any other, 64 KiB,
// 5 seconds, 200 with JSON, client_id equal to the URL, the caching bounds), the consent page's identity,
// CLIENT_ID_METADATA=off, and the authorization-code flow end to end with such a client.
import http from "node:http";
import net from "node:net";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { setEnvForTests, type Env } from "@/env";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { loadConsentScreen } from "@/consent/consent-screen";
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
const VERIFIER = "metadata-document-verifier-".padEnd(64, "v");

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;
const handlers = new Map<string, Handler>();
const hits = new Map<string, number>();
let server: http.Server;
let origin = "";
let previous: Partial<Env>;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    hits.set(request.url!, (hits.get(request.url!) ?? 0) + 1);
    const handler = handlers.get(request.url!);
    if (handler) handler(request, response);
    else response.writeHead(404, { "content-type": "application/json" }).end("{}");
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

/** A fresh path on the test server, so that no test sees another's cached client. */
const freshUrl = (name = "client") => `${origin}/${name}-${randomBytes(6).toString("hex")}.json`;
const pathOf = (url: string) => new URL(url).pathname;

const documentFor = (clientId: string, extra: Record<string, unknown> = {}) => ({ client_id: clientId, client_name: "Agent Smith", redirect_uris: [REDIRECT], ...extra });

function serveJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  handlers.set(pathOf(url), (_, response) => {
    response.writeHead(200, { "content-type": "application/json", ...headers }).end(typeof body === "string" ? body : JSON.stringify(body));
  });
}

async function refusal(clientId: string): Promise<string> {
  try {
    await metadataDocumentClient(clientId);
  } catch (error) {
    if (error instanceof MetadataDocumentError) return error.message;
    throw error;
  }
  throw new Error(`${clientId} was accepted`);
}

const authQuery = (clientId: string, extra: Record<string, string> = {}) =>
  new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "readonly", state: "s", code_challenge: s256(VERIFIER), code_challenge_method: "S256", ...extra });

describe("the authorization-code flow with a client named by its metadata document", () => {
  it("fetches the document, shows its host as the app's identity, unverified, and issues tokens to the public client", async () => {
    const clientId = freshUrl();
    serveJson(clientId, documentFor(clientId, { logo_uri: "https://agent.example.test/logo.png", client_uri: "https://agent.example.test/" }));
    const user = await makeUser();
    const cookie = await sessionCookie(user);
    const auth = await call("GET", `${AUTH}?${authQuery(clientId)}`, { headers: { cookie } });
    expect(auth.status).toBe(302);
    const consent = new URL(auth.headers.get("location")!, ISS);
    expect(consent.pathname).toBe("/consent");
    const sealed = consent.searchParams.get("request")!;
    expect(await loadConsentScreen(sealed, user.id)).toMatchObject({
      clientId,
      clientName: "Agent Smith",
      documentHost: new URL(origin).host,
      ownerName: null,
      unverified: true,
      logoUri: null,
    });
    expect(await (await db()).client.findUnique({ where: { clientId } })).toMatchObject({ isPublic: true, tokenEndpointAuthMethod: "none", registeredVia: "metadata_document", grantType: "authorization_code", ownerId: null });

    const decided = await call("POST", "/consent/decide", {
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ISS, cookie },
      raw: new URLSearchParams({ request: sealed, csrf: consentCsrfToken(user.id, sealed), decision: "approve" }).toString(),
    });
    const code = new URL(decided.headers.get("location")!).searchParams.get("code")!;
    const tokens = await call("POST", TOKEN, { body: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: clientId } });
    expect(tokens.status).toBe(200);
    expect(tokens.json).toMatchObject({ token_type: "Bearer", scope: "readonly", user: `/api/user/${user.id}/` });
    const refreshed = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: (tokens.json as { refresh_token: string }).refresh_token, client_id: clientId } });
    expect(refreshed.status).toBe(200);
    // One fetch served all of it (the row is fresh for 5 minutes).
    expect(hits.get(pathOf(clientId))).toBe(1);
  });

  it("a secret or a client_assertion from such a public client is invalid_client; a document asking for a secret method is refused", async () => {
    const clientId = freshUrl();
    serveJson(clientId, documentFor(clientId));
    const withSecret = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: "x", client_id: clientId, client_secret: "guess" } });
    expect(withSecret.status).toBe(401);
    expect(withSecret.json).toEqual({ error: "invalid_client" });
    const withAssertion = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: "x", client_id: clientId, client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", client_assertion: "a.b.c" } });
    expect(withAssertion.json).toEqual({ error: "invalid_client" });

    const jwtClient = freshUrl();
    serveJson(jwtClient, documentFor(jwtClient, { token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [] } }));
    expect(await refusal(jwtClient)).toBe("jwks: keys: at least one key");
    const secretClient = freshUrl();
    serveJson(secretClient, documentFor(secretClient, { token_endpoint_auth_method: "client_secret_basic" }));
    expect(await refusal(secretClient)).toBe("token_endpoint_auth_method client_secret_basic is not allowed: use none or private_key_jwt");
    const withClientSecret = freshUrl();
    serveJson(withClientSecret, documentFor(withClientSecret, { client_secret: "s" }));
    expect(await refusal(withClientSecret)).toBe("must not hold a client_secret");
    const tokenRefusal = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: "x", client_id: jwtClient } });
    expect(tokenRefusal.status).toBe(401);
    expect(tokenRefusal.json).toEqual({ error: "invalid_client" });
  });

  it("a registered scope in the document bounds what the client may ask for", async () => {
    const clientId = freshUrl();
    serveJson(clientId, documentFor(clientId, { scope: "readonly" }));
    const user = await makeUser();
    const auth = await call("GET", `${AUTH}?${authQuery(clientId, { scope: "readwrite" })}`, { headers: { cookie: await sessionCookie(user) } });
    expect(new URL(auth.headers.get("location")!).searchParams.get("error")).toBe("invalid_scope");
  });

  it("an unusable document is the authorization endpoint's error page naming the problem, never a redirect", async () => {
    const clientId = freshUrl();
    serveJson(clientId, documentFor(`${clientId}x`));
    const res = await call("GET", `${AUTH}?${authQuery(clientId)}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.text).toContain("invalid_client");
    expect(res.text).toContain("client_id does not equal the URL it was fetched from");
  });
});

describe("what the document must be", () => {
  it("its client_id equal to the URL, character for character; a name and https-or-loopback redirect URIs", async () => {
    const cases: Array<[(url: string) => unknown, RegExp]> = [
      [(url) => documentFor(url.toUpperCase()), /client_id does not equal/],
      [(url) => documentFor(`${url}/`), /client_id does not equal/],
      [(url) => ({ client_id: url, redirect_uris: [REDIRECT] }), /^client_name: /],
      [(url) => documentFor(url, { redirect_uris: [] }), /^redirect_uris: /],
      [(url) => documentFor(url, { redirect_uris: ["myapp://cb"] }), /^redirect_uris: myapp:\/\/cb: /],
      [(url) => documentFor(url, { logo_uri: "http://agent.example.test/logo.png" }), /^logo_uri: must be an https URL/],
      [(url) => documentFor(url, { scope: "admin" }), /^scope: unknown scope admin/],
      [() => [1, 2], /is not a JSON object/],
    ];
    for (const [body, problem] of cases) {
      const url = freshUrl();
      serveJson(url, body(url));
      expect(await refusal(url)).toMatch(problem);
    }
  });

  it("a 200 with a JSON body only: other statuses, another Content-Type and a body that is not JSON are refused", async () => {
    const missing = freshUrl();
    expect(await refusal(missing)).toBe("answered 404, not 200");
    const html = freshUrl();
    handlers.set(pathOf(html), (_, response) => response.writeHead(200, { "content-type": "text/html" }).end(JSON.stringify(documentFor(html))));
    expect(await refusal(html)).toBe("answered a body that is not JSON (Content-Type)");
    const broken = freshUrl();
    serveJson(broken, "{not json");
    expect(await refusal(broken)).toBe("answered a body that is not JSON");
  });

  it("redirects are not followed", async () => {
    const target = freshUrl("target");
    serveJson(target, documentFor(target));
    for (const status of [301, 302, 303, 307, 308]) {
      const moved = freshUrl("moved");
      handlers.set(pathOf(moved), (_, response) => response.writeHead(status, { location: target }).end());
      expect(await refusal(moved)).toBe(`answered ${status}: redirects are not followed`);
    }
    expect(hits.get(pathOf(target))).toBeUndefined();
  });

  it("at most 64 KiB, whether the server announces the length or streams it", async () => {
    const padding = "x".repeat(64 * 1024);
    const announced = freshUrl();
    serveJson(announced, documentFor(announced, { padding }));
    expect(await refusal(announced)).toBe("larger than 64 KiB");
    const streamed = freshUrl();
    handlers.set(pathOf(streamed), (_, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      for (let i = 0; i < 80; i++) response.write(" ".repeat(1024));
      response.end(JSON.stringify(documentFor(streamed)));
    });
    expect(await refusal(streamed)).toBe("larger than 64 KiB");
    // Just under the limit is fine.
    const under = freshUrl();
    const body = JSON.stringify(documentFor(under));
    serveJson(under, body + " ".repeat(64 * 1024 - body.length));
    expect((await metadataDocumentClient(under)).clientId).toBe(under);
  });

  it("within 5 seconds: a server that never answers, or stops in the middle of the body, is given up", { timeout: 20_000 }, async () => {
    const silent = freshUrl();
    handlers.set(pathOf(silent), () => {});
    const stalled = freshUrl();
    handlers.set(pathOf(stalled), (_, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"client_id": ');
    });
    const [a, b] = await Promise.all([refusal(silent), refusal(stalled)]);
    expect(a).toBe("not fetched within 5 seconds");
    expect(b).toBe("not fetched within 5 seconds");
  });
});

describe("where documents may come from", () => {
  /** A listening socket that records every connection made to it. */
  async function probe(host: string) {
    const connections: string[] = [];
    const listener = net.createServer((socket) => {
      connections.push(socket.remoteAddress ?? "?");
      socket.destroy();
    });
    await new Promise<void>((resolve, reject) => listener.once("error", reject).listen(0, host, resolve));
    return { port: (listener.address() as AddressInfo).port, connections, close: () => new Promise((resolve) => listener.close(resolve)) };
  }

  it("never connects to a loopback address, by IP literal or by a name resolving to one (the probe shows a connection is recorded when one is made)", async () => {
    const v4 = await probe("127.0.0.1");
    try {
      expect(await refusal(`https://127.0.0.1:${v4.port}/client.json`)).toBe(`127.0.0.1:${v4.port} resolves to a non-public address (127.0.0.1)`);
      expect(await refusal(`https://localhost:${v4.port}/client.json`)).toMatch(new RegExp(`^localhost:${v4.port} resolves to a non-public address`));
      expect(await refusal(`https://[::ffff:7f00:1]:${v4.port}/client.json`)).toBe(`[::ffff:7f00:1]:${v4.port} resolves to a non-public address (::ffff:7f00:1)`);
      // http, on any origin but the one CLIENT_ID_METADATA_INSECURE_ORIGIN names: refused before any lookup.
      expect(await refusal(`http://127.0.0.1:${v4.port}/client.json`)).toBe("client_id must be an https URL");
      expect(v4.connections).toEqual([]);

      // The probe itself: named as the insecure origin, the same socket records the connection.
      setEnvForTests({ clientIdMetadataInsecureOrigin: `http://127.0.0.1:${v4.port}` });
      await refusal(`http://127.0.0.1:${v4.port}/client.json`);
      expect(v4.connections).toHaveLength(1);
    } finally {
      setEnvForTests({ clientIdMetadataInsecureOrigin: origin });
      await v4.close();
    }
  });

  it("never connects to ::1 either", async () => {
    let v6: Awaited<ReturnType<typeof probe>>;
    try {
      v6 = await probe("::1");
    } catch {
      return; // no IPv6 loopback on this machine: nothing to connect to anyway
    }
    try {
      expect(await refusal(`https://[::1]:${v6.port}/client.json`)).toBe(`[::1]:${v6.port} resolves to a non-public address (::1)`);
      expect(v6.connections).toEqual([]);
    } finally {
      await v6.close();
    }
  });

  it.each([
    ["https://10.0.0.1/client.json", "10.0.0.1"],
    ["https://192.168.0.10/client.json", "192.168.0.10"],
    ["https://169.254.169.254/latest/meta-data", "169.254.169.254"],
    ["https://[fc00::1]/client.json", "fc00::1"],
    ["https://[fd12:3456::1]/client.json", "fd12:3456::1"],
    ["https://[fe80::1]/client.json", "fe80::1"],
    ["https://0.0.0.0/client.json", "0.0.0.0"],
  ])("refuses %s (a private, link-local or unique local address) before connecting", async (url, address) => {
    expect(await refusal(url)).toMatch(new RegExp(`resolves to a non-public address \\(${address.replace(/\./g, "\\.")}\\)$`));
  });

  it("refuses client_ids that are not a plain https URL with a path", async () => {
    for (const [clientId, problem] of [
      ["https://agent.example.test", "client_id must have a path"],
      ["https://agent.example.test/", "client_id must have a path"],
      ["https://agent.example.test/a#b", "client_id must not hold a fragment"],
      ["https://user:pw@agent.example.test/a", "client_id must not hold credentials"],
      ["https://agent.example.test/a/../b", "client_id must not hold dot segments"],
      ["https://AGENT.example.test/a", "client_id must be written as https://agent.example.test/a"],
      ["https://agent.example.test:443/a", "client_id must be written as https://agent.example.test/a"],
      ["https://", "client_id not a URL"],
    ]) {
      expect({ clientId, problem: await refusal(clientId!) }).toEqual({ clientId, problem });
    }
  });
});

describe("caching (Cache-Control, within 5 minutes and 24 hours)", () => {
  async function fetchesAfter(headers: Record<string, string>, steps: number[]): Promise<number[]> {
    const url = freshUrl();
    serveJson(url, documentFor(url), headers);
    const counts: number[] = [];
    await metadataDocumentClient(url);
    for (const ms of steps) {
      advanceClock(ms);
      await metadataDocumentClient(url);
      counts.push(hits.get(pathOf(url)) ?? 0);
    }
    return counts;
  }

  it("max-age within the bounds is kept as it says", async () => {
    expect(await fetchesAfter({ "cache-control": "public, max-age=600" }, [599_000, 2_000])).toEqual([1, 2]);
  });

  it("less than 5 minutes (or no-store, no-cache, or no Cache-Control) counts as 5 minutes", async () => {
    expect(await fetchesAfter({ "cache-control": "max-age=10" }, [200_000, 99_000, 2_000])).toEqual([1, 1, 2]);
    expect(await fetchesAfter({ "cache-control": "no-store" }, [299_000, 2_000])).toEqual([1, 2]);
    expect(await fetchesAfter({}, [299_000, 2_000])).toEqual([1, 2]);
  });

  it("more than 24 hours counts as 24 hours", async () => {
    expect(await fetchesAfter({ "cache-control": "max-age=31536000" }, [86_399_000, 2_000])).toEqual([1, 2]);
  });

  it("a stale document that can no longer be fetched makes the client unusable", async () => {
    const url = freshUrl();
    serveJson(url, documentFor(url));
    await metadataDocumentClient(url);
    handlers.delete(pathOf(url));
    expect((await metadataDocumentClient(url)).clientId).toBe(url);
    advanceClock(301_000);
    expect(await refusal(url)).toBe("answered 404, not 200");
  });

  it("a changed document replaces the row's metadata when it is fetched again", async () => {
    const url = freshUrl();
    serveJson(url, documentFor(url));
    await metadataDocumentClient(url);
    serveJson(url, documentFor(url, { client_name: "Agent Jones", redirect_uris: ["https://agent.example.test/new"] }));
    advanceClock(301_000);
    expect(await metadataDocumentClient(url)).toMatchObject({ name: "Agent Jones", redirectUris: JSON.stringify(["https://agent.example.test/new"]) });
  });
});

describe("requests at once", () => {
  it("requests for a URL not yet fetched, fired at once, share one fetch and one client row", async () => {
    const url = freshUrl();
    serveJson(url, documentFor(url));
    const clients = await Promise.all(Array.from({ length: 8 }, () => metadataDocumentClient(url)));
    expect(new Set(clients.map((client) => client.id)).size).toBe(1);
    expect(hits.get(pathOf(url))).toBe(1);
    expect(await (await db()).client.count({ where: { clientId: url } })).toBe(1);
  });
});

describe("CLIENT_ID_METADATA", () => {
  it("on (the default): the metadata says client_id_metadata_document_supported", async () => {
    expect((await call("GET", "/.well-known/oauth-authorization-server")).json).toMatchObject({ client_id_metadata_document_supported: true });
    expect((await call("GET", "/.well-known/openid-configuration")).json).toMatchObject({ client_id_metadata_document_supported: true });
  });

  it("off: a URL client_id is an unknown client, nothing is fetched, and the metadata does not say it", async () => {
    const url = freshUrl();
    serveJson(url, documentFor(url));
    await metadataDocumentClient(url);
    setEnvForTests({ clientIdMetadata: false });
    try {
      const res = await call("GET", `${AUTH}?${authQuery(url)}`);
      expect(res.status).toBe(400);
      expect(res.text).toContain("invalid_client");
      const token = await call("POST", TOKEN, { body: { grant_type: "refresh_token", refresh_token: "x", client_id: url } });
      expect(token.json).toEqual({ error: "invalid_client" });
      expect(hits.get(pathOf(url))).toBe(1);
      expect((await call("GET", "/.well-known/oauth-authorization-server")).json).not.toHaveProperty("client_id_metadata_document_supported");
      expect((await call("GET", "/.well-known/openid-configuration")).json).not.toHaveProperty("client_id_metadata_document_supported");
    } finally {
      setEnvForTests({ clientIdMetadata: true });
    }
  });
});
