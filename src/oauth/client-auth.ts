// Client authentication at the token endpoint (RFC 6749 2.3.1, docs/rules/tokens.md#client-authentication):
// client_id/client_secret in the body, or HTTP Basic with both parts form-url-decoded; not both. Secrets are
// checked in constant time against their stored digest. Failures are 401 invalid_client, with a Basic
// challenge when Basic was used. The input rule (src/http/input-text.ts): a client_id or secret holding a
// control character, in the body or in Basic, is 400 invalid_request before any lookup (PostgreSQL text cannot
// hold U+0000, and the lookup of the client is shared with other requests: src/db/fast-sql.ts). A client_id that
// is a URL names a client ID metadata document (docs/rules/tokens.md#client-id-metadata-documents): a public
// client or a private_key_jwt one with the document's keys, fetched or read from its row here; a secret from
// it is invalid_client, and an assertion is checked as any client's.
// A signed JWT instead of a secret (RFC 7523 2.2, docs/rules/tokens.md#client-assertions): client_assertion_type
// and client_assertion, checked by src/oauth/client-assertion.ts, never together with a secret or Basic
// (RFC 6749 2.3: one method per request). A client registered with private_key_jwt authenticates only that way.
import { controlCharacterMessage, hasControlCharacter } from "@/http/input-text";
import type { Client } from "@/generated/sqlite/client";
import { OAuthError } from "@/oauth/errors";
import { stringParam } from "@/oauth/params";
import { isPublicClient } from "@/clients/represent";
import { clientByClientId } from "@/db/fast-sql";
import { secretMatchesDigest } from "@/secrets";
import { log } from "@/observability/log";
import { assertionClientId, CLIENT_ASSERTION_TYPE, ClientAssertionError, verifyClientAssertion } from "@/oauth/client-assertion";
import { isMetadataDocumentClientId, metadataDocumentClient, MetadataDocumentError } from "@/client-metadata-documents/document-client";

type Credentials =
  | { clientId: string; secret: string | undefined; method: "basic" | "body" | "none" }
  | { clientId: string; secret: undefined; method: "assertion"; assertion: string };

export const PRIVATE_KEY_JWT = "private_key_jwt";

const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, " "));

/** Reads the Basic credentials of an Authorization header, or null when there is no Basic header. */
export function parseBasic(header: string | null): { clientId: string; secret: string } | null {
  if (!header || !/^basic /i.test(header)) return null;
  const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) throw basicFailure();
  let credentials: { clientId: string; secret: string };
  try {
    credentials = { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw basicFailure();
  }
  for (const [field, value] of [["client_id", credentials.clientId], ["client_secret", credentials.secret]] as const) {
    if (hasControlCharacter(value)) throw new OAuthError("invalid_request", {}, `Basic ${controlCharacterMessage(field)}`);
  }
  return credentials;
}

const basicFailure = () => new OAuthError("invalid_client", { "WWW-Authenticate": 'Basic realm="oauth"' });

export function readCredentials(request: Request, params: Record<string, unknown>): Credentials {
  const basic = parseBasic(request.headers.get("authorization"));
  const bodyId = stringParam(params, "client_id");
  const bodySecret = stringParam(params, "client_secret");
  const assertionType = stringParam(params, "client_assertion_type");
  const assertion = stringParam(params, "client_assertion");
  if (assertionType !== undefined || assertion !== undefined) {
    if (basic || bodySecret !== undefined) throw new OAuthError("invalid_request", {}, "a client assertion and a secret at once");
    if (assertionType !== CLIENT_ASSERTION_TYPE || assertion === undefined) throw new OAuthError("invalid_client", {}, "client_assertion_type or client_assertion missing or unsupported");
    let clientId: string;
    try {
      clientId = assertionClientId(assertion);
    } catch (error) {
      throw new OAuthError("invalid_client", {}, error instanceof ClientAssertionError ? error.message : "unreadable assertion");
    }
    if (bodyId !== undefined && bodyId !== clientId) throw new OAuthError("invalid_client", {}, "client_id differs from the assertion's");
    return { clientId, secret: undefined, method: "assertion", assertion };
  }
  if (basic) {
    if (bodySecret !== undefined) throw new OAuthError("invalid_request", {}, "client credentials in both Basic and body");
    if (bodyId !== undefined && bodyId !== basic.clientId) throw new OAuthError("invalid_request", {}, "client_id differs from Basic");
    return { clientId: basic.clientId, secret: basic.secret, method: "basic" };
  }
  if (bodyId === undefined) throw new OAuthError("invalid_client", {}, "no client_id");
  return { clientId: bodyId, secret: bodySecret, method: bodySecret === undefined ? "none" : "body" };
}

/** Authenticates the client of a token, revocation or introspection request. */
export async function authenticateClient(request: Request, params: Record<string, unknown>): Promise<Client> {
  const credentials = readCredentials(request, params);
  const fail = () =>
    new OAuthError("invalid_client", credentials.method === "basic" ? { "WWW-Authenticate": 'Basic realm="oauth"' } : {});
  let client: Client | null;
  if (isMetadataDocumentClientId(credentials.clientId)) {
    try {
      client = await metadataDocumentClient(credentials.clientId);
    } catch (error) {
      if (error instanceof MetadataDocumentError) throw new OAuthError("invalid_client", {}, `metadata document: ${error.message}`);
      throw error;
    }
    // docs/rules/tokens.md#client-id-metadata-documents: public or private_key_jwt, never a secret.
    if (credentials.secret !== undefined) throw fail();
  } else {
    client = await clientByClientId(credentials.clientId); // one statement (src/db/fast-sql.ts)
  }
  if (!client) throw fail();
  if (credentials.method === "assertion") {
    try {
      await verifyClientAssertion(request, client, credentials.assertion);
    } catch (error) {
      if (!(error instanceof ClientAssertionError)) throw error;
      log.info("client assertion refused", { client: client.clientId, reason: error.message });
      throw new OAuthError("invalid_client", {}, error.message);
    }
    return client;
  }
  // A client registered with private_key_jwt proves itself with an assertion and nothing else.
  if (client.tokenEndpointAuthMethod === PRIVATE_KEY_JWT) throw fail();
  if (credentials.secret === undefined) {
    // Only a public client may identify itself by client_id alone.
    if (!isPublicClient(client)) throw fail();
    return client;
  }
  if (!client.secretDigest || !secretMatchesDigest(credentials.secret, client.secretDigest)) throw fail();
  return client;
}
