// Clients named by a client ID metadata document (draft-ietf-oauth-client-id-metadata-document,
// docs/rules/tokens.md#client-id-metadata-documents). A client_id that is an https URL with a path is the
// address of the client's metadata: `client_id` (equal to that URL, character for character), `client_name`,
// `redirect_uris`, and optionally `client_uri`, `logo_uri` (https), `scope`, `application_type`, `jwks`.
// Such a client is public (token_endpoint_auth_method none, PKCE required as for every public client), or
// authenticates with private_key_jwt (RFC 7523 2.2) by the keys of the document's `jwks` (the rules of
// src/clients/client-keys.ts; a private_key_jwt document without them is refused; a public client's jwks are
// not kept); a shared-secret method or a client_secret is refused. Its grant is authorization_code (with
// refresh_token).
// The document is fetched by src/client-metadata-documents/fetch-document.ts and kept in the client's own row
// (the Client table, shared by every instance) until its Cache-Control says (5 minutes to 24 hours); a
// stale row is fetched again before use, and a document that can no longer be fetched or read makes the
// client unusable (its grants and tokens stay until the row is deleted). CLIENT_ID_METADATA=off: such
// client_ids are unknown. Such clients are unverified: nobody here vouched for the name their document gives.
import { z } from "zod";
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { env } from "@/env";
import { readableName } from "@/http/input-text";
import { db, write } from "@/db/client";
import { log } from "@/observability/log";
import { redirectUriProblem } from "@/clients/redirect-uri";
import { parseClientJwks } from "@/clients/client-keys";
import { fetchMetadataDocument, MetadataDocumentError } from "@/client-metadata-documents/fetch-document";

export { MetadataDocumentError } from "@/client-metadata-documents/fetch-document";

/** registeredVia of a client named by its metadata document. */
export const METADATA_DOCUMENT = "metadata_document";
const MAX_CLIENT_ID_LENGTH = 2000;
/** The scopes of docs/rules/tokens.md#scopes, in their canonical order (src/oauth/scope.ts, which sits above this folder). */
const SCOPE_NAMES = ["readonly", "readwrite", "openid", "profile", "email"];

/** Whether this client_id is a URL, and so names a metadata document rather than a client registered here. */
export function isMetadataDocumentClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

/** Whether this client was named by its metadata document (its consent page shows the document's host). */
export function isMetadataDocumentClient(client: Pick<Client, "registeredVia">): boolean {
  return client.registeredVia === METADATA_DOCUMENT;
}

/** The problem with a client_id as a metadata document URL (draft 3), or null. */
function clientIdProblem(clientId: string, insecureOrigin: string | null): string | null {
  if (clientId.length > MAX_CLIENT_ID_LENGTH) return `longer than ${MAX_CLIENT_ID_LENGTH} characters`;
  if (!URL.canParse(clientId)) return "not a URL";
  const url = new URL(clientId);
  const insecure = insecureOrigin !== null && url.origin === insecureOrigin;
  if (url.protocol !== "https:" && !insecure) return "must be an https URL";
  // The exact form the URL parser gives it: no credentials, fragment, dot segments, default port or case
  // that another spelling would hide, so that the string compared with the document's client_id is the one
  // fetched.
  if (url.username || url.password) return "must not hold credentials";
  if (clientId.includes("#")) return "must not hold a fragment";
  if (url.pathname === "/" || url.pathname === "") return "must have a path";
  if (/\/\.{1,2}(?:\/|$)|%2e/i.test(clientId.split("?")[0]!)) return "must not hold dot segments";
  if (url.href !== clientId) return `must be written as ${url.href}`;
  return null;
}

const webUrl = (httpsOnly: boolean) =>
  z
    .string()
    .max(2000)
    .refine((value) => URL.canParse(value) && (new URL(value).protocol === "https:" || (!httpsOnly && new URL(value).protocol === "http:")), httpsOnly ? "must be an https URL" : "must be an http or https URL");

const PRIVATE_KEY_JWT = "private_key_jwt";

const ZDocument = z.object({
  client_id: z.string(),
  client_name: readableName(100),
  redirect_uris: z.array(z.string()).min(1).max(20),
  client_uri: webUrl(false).optional(),
  logo_uri: webUrl(true).optional(),
  scope: z.string().max(200).optional(),
  application_type: z.enum(["web", "native"]).optional(),
  grant_types: z.array(z.enum(["authorization_code", "refresh_token"])).optional(),
  response_types: z.array(z.literal("code")).optional(),
  token_endpoint_auth_method: z.string().optional(),
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).optional(),
});

/** What a valid document sets on the client's row. */
async function clientFields(clientId: string, body: unknown) {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new MetadataDocumentError("is not a JSON object");
  if ("client_secret" in body || "client_secret_expires_at" in body) throw new MetadataDocumentError("must not hold a client_secret");
  const parsed = ZDocument.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new MetadataDocumentError(`${issue.path.join(".") || "document"}: ${issue.message}`);
  }
  const document = parsed.data;
  if (document.client_id !== clientId) throw new MetadataDocumentError("client_id does not equal the URL it was fetched from");
  const method = document.token_endpoint_auth_method ?? "none";
  if (method !== "none" && method !== PRIVATE_KEY_JWT) throw new MetadataDocumentError(`token_endpoint_auth_method ${method} is not allowed: use none or private_key_jwt`);
  let jwks: string | null = null;
  if (method === PRIVATE_KEY_JWT) {
    if (document.jwks === undefined) throw new MetadataDocumentError("token_endpoint_auth_method private_key_jwt needs jwks");
    const keys = await parseClientJwks(document.jwks);
    if ("problem" in keys) throw new MetadataDocumentError(`jwks: ${keys.problem}`);
    jwks = keys.jwks;
  }
  for (const uri of document.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new MetadataDocumentError(`redirect_uris: ${uri}: ${problem}`);
  }
  let scope: string | null = null;
  if (document.scope !== undefined && document.scope.trim() !== "") {
    const names = [...new Set(document.scope.split(/\s+/).filter(Boolean))];
    const unknown = names.find((name) => !SCOPE_NAMES.includes(name));
    if (unknown) throw new MetadataDocumentError(`scope: unknown scope ${unknown}`);
    scope = SCOPE_NAMES.filter((name) => names.includes(name)).join(" ");
  }
  return {
    name: document.client_name,
    redirectUris: JSON.stringify([...new Set(document.redirect_uris)]),
    clientUri: document.client_uri ?? null,
    logoUri: document.logo_uri ?? null,
    scope,
    applicationType: document.application_type ?? "web",
    isPublic: method === "none",
    tokenEndpointAuthMethod: method,
    jwks,
  };
}

const inFlight = new Map<string, Promise<Client>>();

/**
 * The client a metadata document URL names: its row while the copy there is fresh, else the document
 * fetched again (one fetch per URL at a time in this process). Throws MetadataDocumentError.
 */
export async function metadataDocumentClient(clientId: string): Promise<Client> {
  const settings = env();
  if (!settings.clientIdMetadata) throw new MetadataDocumentError("client ID metadata documents are not accepted here");
  const problem = clientIdProblem(clientId, settings.clientIdMetadataInsecureOrigin);
  if (problem) throw new MetadataDocumentError(`client_id ${problem}`);
  const row = await (await db()).client.findUnique({ where: { clientId } });
  if (row && (!isMetadataDocumentClient(row) || row.metadataDocumentExpiresAt === null)) throw new MetadataDocumentError("client_id is taken");
  if (row && row.metadataDocumentExpiresAt! > now()) return row;
  let pending = inFlight.get(clientId);
  if (!pending) {
    pending = refresh(clientId, settings.clientIdMetadataInsecureOrigin).finally(() => inFlight.delete(clientId));
    inFlight.set(clientId, pending);
  }
  return pending;
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === "P2002";

async function refresh(clientId: string, insecureOrigin: string | null): Promise<Client> {
  let fields: Awaited<ReturnType<typeof clientFields>>;
  let expiresAt: Date;
  try {
    const fetched = await fetchMetadataDocument(new URL(clientId), insecureOrigin);
    fields = await clientFields(clientId, fetched.body);
    expiresAt = new Date(now().getTime() + fetched.cacheSeconds * 1000);
  } catch (error) {
    if (error instanceof MetadataDocumentError) log.info("client metadata document refused", { client: clientId, detail: error.message });
    throw error;
  }
  const save = () =>
    write((tx) =>
      tx.client.upsert({
        where: { clientId },
        update: { ...fields, metadataDocumentExpiresAt: expiresAt },
        create: {
          ...fields,
          clientId,
          ownerId: null,
          grantType: "authorization_code",
          secretDigest: null,
          registeredVia: METADATA_DOCUMENT,
          createdAt: now(),
          metadataDocumentExpiresAt: expiresAt,
        },
      }),
    );
  try {
    return await save();
  } catch (error) {
    // Another instance created the row between the read and the insert: update it instead.
    if (isUniqueViolation(error)) return await save();
    throw error;
  }
}
