// Property-based tests (fast-check, docs/testing.md) of every parser and validator of client input: for any
// input each gives a value or a 4xx error, never another throw (which route() would answer with a 500), and
// what it gives keeps its rule. The request-level twin, src/http/endpoints.property.int.test.ts, sends
// arbitrary bodies to the endpoints themselves.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { safeCallbackUrl } from "@/auth/callback-url";
import { ZBundleReference } from "@/bundles/bundle-reference";
import { matchRedirectUri, redirectUriProblem } from "@/clients/redirect-uri";
import { formatUserCode, normalizeUserCode, USER_CODE_ALPHABET } from "@/device/user-code";
import { readBody } from "@/http/body";
import { pageRequest } from "@/http/collection";
import { ApiError } from "@/http/errors";
import { idFromReference } from "@/http/references";
import { controlCharacterField, hasControlCharacter, isReadableName, readableName } from "@/http/input-text";
import { parseInput } from "@/http/validate";
import { parseBasic } from "@/oauth/client-auth";
import { parseScope, SCOPES } from "@/oauth/scope";
import { parseRequestKey } from "@/permission-requests/key";
import { ZCreatePermissionRequest } from "@/permission-requests/schemas";
import { parseUserReference, ZUserReference } from "@/users/user-reference";

const RUNS = { numRuns: 300 };

/** Characters the input rule is about: C0 controls, DEL, C1 NEL, lone surrogates, bidi, zero-width and line-break ones, among ordinary ones. */
/** The oracle of the rule, written independently of src/http/input-text.ts: any key or string, at any depth. */
function holdsControl(value: unknown): boolean {
  if (typeof value === "string") return /[\u0000-\u001f\u007f]/.test(value);
  if (Array.isArray(value)) return value.some(holdsControl);
  if (value && typeof value === "object") return Object.entries(value).some(([key, child]) => holdsControl(key) || holdsControl(child));
  return false;
}

const nastyUnit = fc.oneof(
  fc.constantFrom("\u0000", "\u0001", "\t", "\n", "\r", "\u001b", "\u001f", "\u007f", "\u0085", "\ud800", "\udfff", "\u202a", "\u202e", "\u2066", "\u2069", "\u200b", "\u200f", "\ufeff", "\u2028", "\u2029", "\u00ad"),
  fc.constantFrom("a", "Z", " ", "é", "😀", "=", "&", "%", ".", "\\", '"'),
);

/** Runs `fn`; a thrown error must be an ApiError with a 4xx status and a non-empty error string. */
async function valueOr4xx<T>(fn: () => T | Promise<T>): Promise<{ value?: T; error?: ApiError }> {
  try {
    return { value: await fn() };
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const api = error as ApiError;
    expect(api.status).toBeGreaterThanOrEqual(400);
    expect(api.status).toBeLessThan(500);
    expect(api.error.length).toBeGreaterThan(0);
    return { error: api };
  }
}

/** Any JSON value, and JSON-ish objects with the fields the schemas look at. */
const anyJson = fc.jsonValue();
const anyInput = fc.oneof(anyJson, fc.string(), fc.integer(), fc.double(), fc.constant(undefined), fc.constant(null));
const hostish = fc.constantFrom("localhost", "127.0.0.1", "[::1]", "example.com", "evil.example", "a.b.c", "xn--80ak6aa92e.com", "");
const uriish = fc.oneof(
  fc.string(),
  fc.webUrl({ withFragments: true, withQueryParameters: true }),
  fc.tuple(fc.constantFrom("http", "https", "javascript", "data", "file", "HTTPS", "custom.app"), hostish, fc.nat(70000), fc.webPath(), fc.string()).map(
    ([scheme, host, port, path, tail]) => `${scheme}://${host}:${port}${path}${tail}`,
  ),
);

describe("parsers and validators of client input, for any input (fast-check)", () => {
  it("request bodies in JSON, text/plain and form encodings: an object of parameters, or a 4xx", async () => {
    const contentType = fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "TEXT/PLAIN;charset=x", "application/x-www-form-urlencoded", "multipart/form-data", "", "application/xml");
    const body = fc.oneof(
      fc.string(),
      fc.uint8Array({ maxLength: 300 }),
      anyJson.map((value) => JSON.stringify(value)),
      fc.dictionary(fc.string(), fc.string()).map((record) => new URLSearchParams(record).toString()),
      fc.array(fc.tuple(fc.constantFrom("a", "b", "grant_type"), fc.string())).map((pairs) => pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")),
    );
    await fc.assert(
      fc.asyncProperty(contentType, body, fc.boolean(), fc.boolean(), async (type, payload, form, allowEmpty) => {
        const request = new Request("http://localhost:3000/api/x/", { method: "POST", headers: type ? { "content-type": type } : {}, body: payload as BodyInit });
        const { value } = await valueOr4xx(() => readBody(request, { form, allowEmpty, invalidMessage: form ? "invalid_request" : undefined }));
        if (value !== undefined) {
          expect(typeof value).toBe("object");
          expect(Array.isArray(value)).toBe(false);
          expect(value).not.toBeNull();
        }
      }),
      RUNS,
    );
  });

  it("bodies over 64 KiB are a 413 whatever they hold", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 64 * 1024 + 1, max: 200 * 1024 }), fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded"), async (size, type) => {
        const request = new Request("http://localhost:3000/api/x/", { method: "POST", headers: { "content-type": type }, body: "a".repeat(size) });
        const { error } = await valueOr4xx(() => readBody(request, { form: true }));
        expect(error?.status).toBe(413);
      }),
      { numRuns: 20 },
    );
  });

  it("user references (URI, e-mail or id): a user id or an e-mail, or a 400 naming the field", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyInput, fc.emailAddress(), fc.nat().map((n) => `/api/user/${n}/`), fc.nat().map((n) => `http://localhost:3000/api/user/${n}`)), async (input) => {
        const parsed = parseUserReference(input);
        if (parsed && "id" in parsed) expect(Number.isSafeInteger(parsed.id) && parsed.id > 0).toBe(true);
        if (parsed && "email" in parsed) expect(parsed.email).toContain("@");
        const { error } = await valueOr4xx(() => parseInput(ZUserReference, input));
        if (error) expect(error.status).toBe(400);
      }),
      RUNS,
    );
  });

  it("bundle references (URI or id): a positive id, or a 400", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyInput, fc.nat().map((n) => `/api/bundle/${n}/`), uriish), async (input) => {
        const id = idFromReference(input, "/api/bundle/");
        if (id !== null) expect(Number.isSafeInteger(id) && id > 0).toBe(true);
        const { value, error } = await valueOr4xx(() => parseInput(ZBundleReference, input));
        if (error) expect(error.status).toBe(400);
        else expect(Number.isSafeInteger(value) && (value as number) > 0).toBe(true);
      }),
      RUNS,
    );
  });

  it("permission-request bodies: the parsed request, or a 400 naming a field", async () => {
    const field = fc.oneof(anyInput, fc.nat().map(String), fc.emailAddress(), uriish);
    const bodyLike = fc.record({ bundle: field, user_allowed: field, user_target: field, ttl: fc.oneof(field, fc.integer({ min: -10, max: 4_000_000 })), redeem_url: fc.oneof(field, uriish) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(fc.oneof(bodyLike, anyJson), async (body) => {
        const { value, error } = await valueOr4xx(() => parseInput(ZCreatePermissionRequest, body));
        if (error) expect(error.status).toBe(400);
        else {
          const ttl = (value as { ttl: number }).ttl;
          expect(Number.isInteger(ttl) && ttl >= 60 && ttl <= 2_592_000).toBe(true);
          expect(new URL((value as { redeem_url: string }).redeem_url, "http://localhost:3000").pathname).toBe("/redeem");
        }
      }),
      RUNS,
    );
  });

  it("scopes: only known scopes come out, each once, whatever the separators; else invalid_scope (400)", async () => {
    const token = fc.oneof(fc.constantFrom(...SCOPES), fc.string({ maxLength: 12 }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.array(token).map((parts) => parts.join(" ")), fc.array(token).map((parts) => parts.join(",")), fc.constant(null), fc.constant(undefined)), async (raw) => {
        const { value: parsed, error } = await valueOr4xx(() => parseScope(raw));
        if (error) expect(error.error).toBe("invalid_scope");
        if (!parsed) return;
        expect(parsed.every((scope) => (SCOPES as readonly string[]).includes(scope))).toBe(true);
        expect(new Set(parsed).size).toBe(parsed.length);
      }),
      RUNS,
    );
  });

  it("redirect URIs: a verdict for any string; only absolute https, or http on a loopback host, without a fragment, are accepted", () => {
    fc.assert(
      fc.property(uriish, fc.array(uriish, { maxLength: 3 }), (uri, registered) => {
        const problem = redirectUriProblem(uri);
        if (problem === null) {
          const url = new URL(uri);
          expect(url.hash).toBe("");
          expect(url.protocol === "https:" || (url.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname))).toBe(true);
        } else {
          expect(typeof problem).toBe("string");
        }
        const match = matchRedirectUri(registered, uri);
        if (match !== null) expect(registered).toContain(match);
      }),
      RUNS,
    );
  });

  it("Basic credentials: both parts form-url-decoded, or nothing, or a 401 invalid_client (a 400 invalid_request for a control character)", async () => {
    const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, "+");
    fc.assert(
      fc.property(fc.string(), fc.string(), (id, secret) => {
        const parsed = parseBasic(`Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString("base64")}`);
        if (id !== "") expect(parsed).toEqual({ clientId: id, secret });
      }),
      RUNS,
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.string().map((s) => `Basic ${s}`), fc.uint8Array().map((b) => `Basic ${Buffer.from(b).toString("base64")}`), fc.constant(null)), async (header) => {
        const { value: parsed, error } = await valueOr4xx(() => parseBasic(header));
        if (error) expect(error.error).toBe(error.status === 400 ? "invalid_request" : "invalid_client");
        if (parsed) expect(typeof parsed.clientId === "string" && typeof parsed.secret === "string").toBe(true);
        if (parsed) expect(hasControlCharacter(parsed.clientId + parsed.secret)).toBe(false);
      }),
      RUNS,
    );
  });

  it("pagination parameters: limit 1-100 and offset >= 0, or a 400 (also for any other parameter)", async () => {
    const param = fc.oneof(fc.string(), fc.integer({ min: -1000, max: 1000 }).map(String), fc.double().map(String), fc.constantFrom("1e2", "0x10", " 5", "", "20"));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom("limit", "offset", "order_by", "name", "limit "), param, { maxKeys: 3 }), async (query) => {
        const request = new Request(`http://localhost:3000/api/bundle/?${new URLSearchParams(query)}`);
        const { value, error } = await valueOr4xx(() => pageRequest(request));
        if (error) expect(error.status).toBe(400);
        else {
          expect(Number.isInteger(value!.limit) && value!.limit >= 1 && value!.limit <= 100).toBe(true);
          expect(Number.isInteger(value!.offset) && value!.offset >= 0).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it("user codes: any case, dashes or spaces give back the code; anything else nothing", () => {
    const code = fc.array(fc.constantFrom(...USER_CODE_ALPHABET.split("")), { minLength: 8, maxLength: 8 }).map((letters) => letters.join(""));
    fc.assert(
      fc.property(code, fc.constantFrom("", "-", " ", "  "), fc.boolean(), (value, separator, lower) => {
        const typed = `${value.slice(0, 4)}${separator}${value.slice(4)}`;
        expect(normalizeUserCode(lower ? typed.toLowerCase() : typed)).toBe(value);
        expect(formatUserCode(value)).toBe(`${value.slice(0, 4)}-${value.slice(4)}`);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.string(), (input) => {
        const normalized = normalizeUserCode(input);
        if (normalized !== null) expect(normalized).toMatch(new RegExp(`^[${USER_CODE_ALPHABET}]{8}$`));
      }),
      RUNS,
    );
  });

  it("callback URLs after sign-in: always a path on this site", () => {
    fc.assert(
      fc.property(fc.oneof(anyInput, uriish, fc.webPath(), fc.string().map((s) => `/${s}`), fc.string().map((s) => `//${s}`)), (input) => {
        const url = safeCallbackUrl(input);
        expect(url.startsWith("/")).toBe(true);
        expect(new URL(url, "http://localhost:3000").origin).toBe("http://localhost:3000");
      }),
      RUNS,
    );
  });

  it("permission-request keys: digits are an id, anything else a token", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.nat().map(String)), (key) => {
        const parsed = parseRequestKey(key);
        if (parsed.kind === "id") expect(String(parsed.id)).toBe(key.replace(/^0+(?=\d)/, ""));
        else expect(parsed.token).toBe(key);
      }),
      RUNS,
    );
  });

  it("the input rule: a body (JSON or form) is read only when none of its strings or keys, at any depth, holds a control character; else a 400 naming the first that does", async () => {
    const mixed = fc.oneof(fc.string({ unit: nastyUnit, maxLength: 12 }), fc.string({ maxLength: 12 }));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: "small" }, mixed, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie("value"), { maxLength: 3 }), fc.dictionary(mixed, tie("value"), { maxKeys: 3 })),
    })).value;
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.oneof(mixed, fc.constantFrom("__proto__", "constructor", "valueOf", "toString")), json, { maxKeys: 4 }), fc.boolean(), async (params, asForm) => {
        const flat = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
        const request = asForm
          ? new Request("http://localhost:3000/api/x/", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(flat).toString() })
          : new Request("http://localhost:3000/api/x/", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(params) });
        // What the server receives: a form encodes a lone surrogate as U+FFFD (two keys may then repeat: a 400).
        const pairs = [...new URLSearchParams(new URLSearchParams(flat).toString())];
        if (asForm && new Set(pairs.map(([k]) => k)).size !== pairs.length) return;
        const sent = asForm ? Object.fromEntries(pairs) : (JSON.parse(JSON.stringify(params)) as Record<string, unknown>);
        const offending = holdsControl(sent);
        const { value, error } = await valueOr4xx(() => readBody(request, { form: true, allowEmpty: true }));
        if (Object.keys(sent).length === 0) return;
        const field = controlCharacterField(sent);
        expect(offending).toBe(field !== null);
        if (field === null) expect(value).toEqual(sent);
        else expect(error?.error).toBe(`${field}: must not contain control characters`);
      }),
      RUNS,
    );
  });

  it("names a person reads: accepted (trimmed) only without control, format (Cf), line-break or lone surrogate characters; else a 400 naming the field", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: nastyUnit, maxLength: 30 }), fc.string({ unit: "grapheme", maxLength: 30 })), (name) => {
        const parsed = readableName(100).safeParse(name);
        const unreadable = [...name].some((c) => /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u.test(c));
        expect(isReadableName(name)).toBe(!unreadable);
        if (parsed.success) {
          expect(unreadable).toBe(false);
          expect(parsed.data).toBe(name.trim());
        } else if (unreadable) {
          expect(parsed.error.issues[0]!.message).toBe("must not contain control, format (such as bidi) or line-break characters");
        } else {
          expect(name.trim() === "" || name.trim().length > 100).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
