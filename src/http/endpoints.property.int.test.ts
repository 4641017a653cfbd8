// The request-level twin of src/http/parsers.property.test.ts (docs/testing.md): arbitrary bodies, in every
// encoding the endpoints take, and arbitrary paths and query strings, sent to the real endpoints through the
// production dispatcher: every answer is a 2xx or a 4xx with a JSON {"error"}, never a 500. Strings hold the
// characters of the input rule (src/http/input-text.ts) too: U+0000 (which PostgreSQL text cannot hold) and
// the other controls, lone surrogates, bidi, zero-width and line-break characters, in every parameter of every
// endpoint: bodies, Basic credentials, the authorization endpoint's query and every route's path parameter.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setEnvForTests, type Env } from "@/env";
import { call } from "@/testing/app";
import { makeClient, passwordSession } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const RUNS = { numRuns: 40 };
let session: Awaited<ReturnType<typeof passwordSession>>;
let codeClient: Awaited<ReturnType<typeof makeClient>>;
let cookie: string;
let previous: Partial<Env>;

beforeAll(async () => {
  previous = setEnvForTests({ registration: "open" });
  session = await passwordSession();
  codeClient = await makeClient({ ownerId: session.user.id, grantType: "authorization_code" });
  cookie = await sessionCookie(session.user);
});
afterAll(() => setEnvForTests(previous));

/** Characters of the input rule, among ordinary ones; U+0000, the one PostgreSQL refuses, most often. */
const nastyUnit = fc.oneof(
  { arbitrary: fc.constant("\u0000"), weight: 2 },
  { arbitrary: fc.constantFrom("\u0001", "\t", "\n", "\r", "\u001b", "\u007f", "\u0085", "\ud800", "\udc00", "\u202e", "\u2066", "\u200b", "\ufeff", "\u2028", "\u2029"), weight: 2 },
  { arbitrary: fc.constantFrom("a", "Z", "0", " ", "é", "😀", "=", "&", "%", "/", ".", "+", ":"), weight: 1 },
);
const nasty = fc.string({ unit: nastyUnit, maxLength: 12 });
/** A known value with one such character put in somewhere. */
const spoiled = (known: string) => fc.tuple(fc.nat(known.length), nastyUnit).map(([at, c]) => known.slice(0, at) + c + known.slice(at));
/** Percent-encoding of a path segment; a lone surrogate as the bytes it would be in UTF-8 (which is not valid UTF-8). */
const pathEncode = (text: string) =>
  [...text]
    .map((c) => {
      if (!/^[\ud800-\udfff]$/.test(c)) return encodeURIComponent(c);
      const unit = c.charCodeAt(0);
      return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((byte) => `%${byte.toString(16).toUpperCase()}`).join("");
    })
    .join("");

const value = fc.oneof(nasty, fc.constant("\u0000"), fc.string({ maxLength: 40 }), fc.integer(), fc.constant(null), fc.boolean(), fc.constant(""), fc.emailAddress(), fc.nat().map((n) => `/api/user/${n}/`), fc.nat().map((n) => `/api/bundle/${n}/`));
const fieldNames = fc.oneof(
  fc.constantFrom("grant_type", "client_id", "client_secret", "username", "password", "scope", "refresh_token", "code", "redirect_uri", "code_verifier", "device_code", "token", "token_type_hint", "name", "bundle", "user_allowed", "user_target", "ttl", "redeem_url", "__proto__", "constructor"),
  fc.constantFrom("response_type", "state", "code_challenge", "code_challenge_method", "nonce", "client_name", "redirect_uris", "grant_types", "token_endpoint_auth_method", "logo_uri", "client_uri", "user"),
  nasty,
);
const params = fc.dictionary(fieldNames, fc.oneof(value, fc.array(value, { maxLength: 2 }), fc.dictionary(nasty, value, { maxKeys: 2 })), { maxKeys: 6 });
const encoded = fc.oneof(
  fc.tuple(fc.constant("application/json"), fc.oneof(params.map((p) => JSON.stringify(p)), fc.jsonValue().map((v) => JSON.stringify(v)), fc.string())),
  fc.tuple(fc.constant("text/plain"), fc.oneof(params.map((p) => JSON.stringify(p)), fc.string())),
  fc.tuple(fc.constant("application/x-www-form-urlencoded"), fc.oneof(params.map((p) => new URLSearchParams(Object.entries(p).map(([k, v]) => [k, v !== null && typeof v === "object" ? JSON.stringify(v) : String(v)])).toString()), fc.string())),
  fc.tuple(fc.constantFrom("", "multipart/form-data; boundary=x", "application/xml"), fc.string()),
);

function expectNot500(response: Awaited<ReturnType<typeof call>>, what: string) {
  expect(response.status, `${what} -> ${response.status} ${response.text.slice(0, 200)}`).toBeLessThan(500);
  if (response.status >= 400 && response.headers.get("content-type")?.startsWith("application/json")) {
    expect(typeof response.json?.error).toBe("string");
  }
}

describe("the endpoints, for any body (fast-check)", () => {
  const endpoints: Array<{ path: string; bearer: boolean }> = [
    { path: "/api/connect/oauth2/token/", bearer: false },
    { path: "/api/connect/oauth2/revoke/", bearer: false },
    { path: "/api/connect/oauth2/introspect/", bearer: false },
    { path: "/api/connect/oauth2/device/", bearer: false },
    { path: "/api/connect/oauth2/par/", bearer: false },
    { path: "/api/connect/oauth2/register/", bearer: false },
    { path: "/api/bundle/", bearer: true },
    { path: "/api/bundle_permission/", bearer: true },
    { path: "/api/bundle_permission_request/", bearer: true },
  ];
  for (const endpoint of endpoints) {
    it(`POST ${endpoint.path}: a 2xx or a 4xx JSON error`, async () => {
      await fc.assert(
        fc.asyncProperty(encoded, fc.boolean(), async ([type, body], basic) => {
          const headers: Record<string, string> = type ? { "content-type": type } : {};
          if (basic && !endpoint.bearer) headers.authorization = `Basic ${Buffer.from(`${session.client.client_id}:x`).toString("base64")}`;
          const response = await call("POST", endpoint.path, { raw: body, headers, token: endpoint.bearer ? session.accessToken : undefined });
          expectNot500(response, `${type} ${body.slice(0, 80)}`);
        }),
        RUNS,
      );
    });
  }

  it("GET on collections with any query string, and resources with any key: a 2xx or a 4xx", async () => {
    const segment = fc.oneof(fc.string({ maxLength: 20 }).map(encodeURIComponent), nasty.map(pathEncode), fc.nat().map(String), fc.constantFrom("%", "%zz", "..", "0", "-1", "9".repeat(30), "%00", "%ff"));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("/api/bundle/", "/api/bundle_permission/", "/api/bundle_permission_request/", "/api/user/"), segment, fc.dictionary(fc.constantFrom("limit", "offset", "q"), fc.oneof(fc.string({ maxLength: 8 }), nasty)), async (base, key, query) => {
        const search = new URLSearchParams(query).toString();
        for (const path of [`${base}?${search}`, `${base}${key}/`]) {
          const response = await call("GET", path, { token: session.accessToken });
          expectNot500(response, path);
        }
      }),
      RUNS,
    );
  });

  it("the token endpoint with the real client's credentials and one parameter spoiled, in the body (form or JSON) or in Basic: a 2xx or a 4xx", async () => {
    const c = session.client;
    const fields = { grant_type: "password", client_id: c.client_id, client_secret: c.client_secret!, username: session.user.email, password: session.user.password, scope: "readonly" };
    const names = Object.keys(fields) as Array<keyof typeof fields>;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names).chain((name) => spoiled(fields[name]).map((bad) => [name, bad] as const)), fc.boolean(), fc.boolean(), async ([name, bad], asJson, inBasic) => {
        const spoilt: Record<string, string> = { ...fields, [name]: bad };
        const headers: Record<string, string> = { "content-type": asJson ? "application/json" : "application/x-www-form-urlencoded" };
        let body = spoilt;
        if (inBasic) {
          const { client_id: id, client_secret: secret, ...rest } = spoilt;
          headers.authorization = `Basic ${Buffer.from(`${pathEncode(id!)}:${pathEncode(secret!)}`).toString("base64")}`;
          body = rest;
        }
        const response = await call("POST", "/api/connect/oauth2/token/", { raw: asJson ? JSON.stringify(body) : new URLSearchParams(body).toString(), headers });
        expectNot500(response, `${name} ${JSON.stringify(bad)}${inBasic ? " (Basic)" : ""}`);
      }),
      { numRuns: 30 },
    );
  });

  it("the authorization endpoint with its parameters spoiled, signed in or not: its error page or a redirect, never a 500", async () => {
    const known = { response_type: "code", client_id: codeClient.client_id, redirect_uri: "https://client.example.test/callback", scope: "readonly", state: "s", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256", nonce: "n", prompt: "consent" };
    const names = Object.keys(known) as Array<keyof typeof known>;
    const spoilt = fc.subarray(names).chain((spoil) => fc.tuple(...spoil.map((name) => spoiled(known[name]).map((bad) => [name, bad] as const))));
    await fc.assert(
      fc.asyncProperty(spoilt, fc.dictionary(fc.constantFrom("max_age", "request_uri", "resource", "login_hint"), value.map(String), { maxKeys: 2 }), fc.boolean(), async (bad, extra, signedIn) => {
        const query: Record<string, string> = { ...known, ...extra, ...Object.fromEntries(bad) };
        const response = await call("GET", `/api/connect/oauth2/auth/?${new URLSearchParams(query)}`, { headers: signedIn ? { cookie } : {} });
        expect(response.status, `${JSON.stringify(query)} -> ${response.status}`).toBeLessThan(500);
        if (response.status >= 400) expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      }),
      { numRuns: 30 },
    );
  });

  it("every route's path parameter, any string: a 2xx or a 4xx JSON error", async () => {
    const routes: Array<[method: string, prefix: string]> = [
      ["GET", "/api/bundle/"],
      ["DELETE", "/api/bundle/"],
      ["GET", "/api/bundle_permission/"],
      ["DELETE", "/api/bundle_permission/"],
      ["GET", "/api/bundle_permission_request/"],
      ["PUT", "/api/bundle_permission_request/"],
      ["GET", "/api/user/"],
      ["DELETE", "/api/oauth2token/"],
      ["DELETE", "/api/accesstoken/"],
      ["GET", "/api/connect/oauth2/register/"],
      ["DELETE", "/api/connect/oauth2/register/"],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.oneof(nasty, fc.nat().map(String).chain((n) => spoiled(n))), async ([method, prefix], key) => {
        const response = await call(method, `${prefix}${pathEncode(key)}/`, { token: session.accessToken });
        expectNot500(response, `${method} ${prefix}${JSON.stringify(key)}`);
      }),
      RUNS,
    );
  });
});
