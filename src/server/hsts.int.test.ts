// Strict-Transport-Security (RFC 6797) under an https APP_URL on every HTML answer
// (docs/rules/operations.md#security-headers): the authorization endpoint's error pages and redirects (which
// Next's page proxy never sees: /api is the fast lane's), the pages (proxy.ts), and whatever else the server
// answers; never under http.
import { NextRequest } from "next/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { env, setEnvForTests } from "@/env";
import { call, startServer } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { openRaw } from "@/testing/raw-socket";
import { proxy } from "../../proxy";

const HTTPS_APP = "https://auth.example.test";
const HSTS = "max-age=31536000";
const AUTH = "/api/connect/oauth2/auth/";

let client: Awaited<ReturnType<typeof makeClient>>;
beforeAll(async () => {
  const owner = await makeUser();
  client = await makeClient({ ownerId: owner.id, grantType: "authorization_code" });
});

const original = env().appUrl;
afterEach(() => void setEnvForTests({ appUrl: original }));

const unknownClient = `${AUTH}?${new URLSearchParams({ response_type: "code", client_id: "no-such-client", redirect_uri: "https://client.example.test/callback" })}`;
const signInFirst = () =>
  `${AUTH}?${new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: "https://client.example.test/callback", scope: "readonly", state: "s" })}`;

describe("under an https APP_URL", () => {
  let server: { url: string; close: () => Promise<void> } | null = null;
  afterAll(() => server?.close());

  it("the authorization endpoint's error page and its redirect carry Strict-Transport-Security, on the wire", async () => {
    setEnvForTests({ appUrl: HTTPS_APP });
    server = await startServer();
    const page = await fetch(server.url + unknownClient, { redirect: "manual" });
    expect(page.status).toBe(400);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("strict-transport-security")).toBe(HSTS);
    const redirect = await fetch(server.url + signInFirst(), { redirect: "manual" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("strict-transport-security")).toBe(HSTS);
    // A refused request target too, the JSON answers, and what goes to Next (here its stand-in, answering a
    // response the front has already given the header): one header on everything the origin answers.
    const health = await fetch(`${server.url}/api/health`);
    expect(health.headers.get("strict-transport-security")).toBe(HSTS);
    const toNext = await fetch(`${server.url}/api/auth/session`);
    expect(await toNext.text()).toBe("not served without Next");
    expect(toNext.headers.get("strict-transport-security")).toBe(HSTS);
    const connection = await openRaw(server.url);
    connection.write("GET /api/auth/../user/1 HTTP/1.1\r\nHost: auth.example.test\r\n\r\n");
    await connection.whenClosed();
    expect(connection.text()).toMatch(/^HTTP\/1\.1 400 /);
    expect(connection.text()).toMatch(/\r\nStrict-Transport-Security: max-age=31536000\r\n/i);
  });

  it("the HTML answers carry it whoever serves them (Next serves /consent/decide and /device/verify)", async () => {
    setEnvForTests({ appUrl: HTTPS_APP });
    const page = await call("GET", unknownClient);
    expect(page.status).toBe(400);
    expect(page.headers.get("strict-transport-security")).toBe(HSTS);
    const decide = (origin: string) =>
      call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", origin }, raw: "request=x&csrf=y&decision=approve" });
    const refused = await decide("https://elsewhere.example"); // the consent form's error page
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toMatch(/^text\/html/);
    expect(refused.headers.get("strict-transport-security")).toBe(HSTS);
    const signIn = await decide(HTTPS_APP); // no session: the redirect to sign in
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get("strict-transport-security")).toBe(HSTS);
  });

  it("pages carry it (proxy.ts, with the other page headers)", () => {
    setEnvForTests({ appUrl: HTTPS_APP });
    const response = proxy(new NextRequest(`${HTTPS_APP}/settings`));
    expect(response.headers.get("strict-transport-security")).toBe(HSTS);
    expect(response.headers.get("content-security-policy")).toMatch(/upgrade-insecure-requests/);
  });
});

describe("under an http APP_URL", () => {
  it("nothing carries Strict-Transport-Security (RFC 6797 7.2: only over secure transport)", async () => {
    const server = await startServer();
    try {
      const page = await fetch(server.url + unknownClient, { redirect: "manual" });
      expect(page.status).toBe(400);
      expect(page.headers.get("strict-transport-security")).toBeNull();
      expect((await fetch(`${server.url}/api/health`)).headers.get("strict-transport-security")).toBeNull();
    } finally {
      await server.close();
    }
    expect((await call("GET", unknownClient)).headers.get("strict-transport-security")).toBeNull();
    expect(proxy(new NextRequest("http://localhost:3000/settings")).headers.get("strict-transport-security")).toBeNull();
  });
});
