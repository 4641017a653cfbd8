// The request-level twin of src/http/parsers.property.test.ts (issue 10 point 7): arbitrary bodies, in every
// encoding the endpoints take, and arbitrary paths and query strings, sent to the real endpoints through the
// production dispatcher: every answer is a 2xx or a 4xx with a JSON {"error"}, never a 500.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "@/testing/app";
import { passwordSession } from "@/testing/factories";

const RUNS = { numRuns: 40 };
let session: Awaited<ReturnType<typeof passwordSession>>;

beforeAll(async () => {
  session = await passwordSession();
});

const value = fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.constant(null), fc.boolean(), fc.constant(""), fc.emailAddress(), fc.nat().map((n) => `/api/user/${n}/`), fc.nat().map((n) => `/api/bundle/${n}/`));
const fieldNames = fc.constantFrom("grant_type", "client_id", "client_secret", "username", "password", "scope", "refresh_token", "code", "redirect_uri", "code_verifier", "device_code", "token", "token_type_hint", "name", "bundle", "user_allowed", "user_target", "ttl", "redeem_url", "__proto__", "constructor");
const params = fc.dictionary(fieldNames, value, { maxKeys: 6 });
const encoded = fc.oneof(
  fc.tuple(fc.constant("application/json"), fc.oneof(params.map((p) => JSON.stringify(p)), fc.jsonValue().map((v) => JSON.stringify(v)), fc.string())),
  fc.tuple(fc.constant("text/plain"), fc.oneof(params.map((p) => JSON.stringify(p)), fc.string())),
  fc.tuple(fc.constant("application/x-www-form-urlencoded"), fc.oneof(params.map((p) => new URLSearchParams(Object.entries(p).map(([k, v]) => [k, String(v)])).toString()), fc.string())),
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
    const segment = fc.oneof(fc.string({ maxLength: 20 }).map(encodeURIComponent), fc.nat().map(String), fc.constantFrom("%", "%zz", "..", "0", "-1", "9".repeat(30)));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("/api/bundle/", "/api/bundle_permission/", "/api/bundle_permission_request/", "/api/user/"), segment, fc.dictionary(fc.constantFrom("limit", "offset", "q"), fc.string({ maxLength: 8 })), async (base, key, query) => {
        const search = new URLSearchParams(query).toString();
        for (const path of [`${base}?${search}`, `${base}${key}/`]) {
          const response = await call("GET", path, { token: session.accessToken });
          expectNot500(response, path);
        }
      }),
      RUNS,
    );
  });
});
