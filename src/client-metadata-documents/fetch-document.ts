// Fetching a client ID metadata document (draft-ietf-oauth-client-id-metadata-document 4,
// docs/rules/tokens.md#client-id-metadata-documents). The rules, each checked on every fetch:
// - https only; the one exception is the origin CLIENT_ID_METADATA_INSECURE_ORIGIN names (tests and
//   development: an http loopback origin), and only that exact origin.
// - The host is resolved here, every address it resolves to must be public, and the connection is made to
//   exactly the address that was checked (src/outbound/pinned-request.ts). An IP literal is checked the same way.
// - No redirects: any answer but 200 is refused, a 3xx included. The body must be JSON (application/json or
//   a +json type) of at most 64 KiB, and the whole fetch (resolution, connection, answer, body) must be done
//   within 5 seconds.
// - How long the document may be used: its Cache-Control max-age, within 5 minutes and 24 hours (no-store,
//   no-cache or no max-age: 5 minutes).
import { checkedAddress, OutboundAddressError, pinnedRequest } from "@/outbound/pinned-request";

export const FETCH_TIMEOUT_MS = 5000;
export const MAX_DOCUMENT_BYTES = 64 * 1024;
export const MIN_CACHE_SECONDS = 5 * 60;
export const MAX_CACHE_SECONDS = 24 * 3600;

/** Why a metadata document cannot be used: the message says what, for the client's developer. */
export class MetadataDocumentError extends Error {
  override name = "MetadataDocumentError";
}

export type FetchedDocument = { body: unknown; cacheSeconds: number };

/** How long a document may be used, from its Cache-Control header (seconds, within the bounds). */
export function cacheSeconds(cacheControl: string | undefined): number {
  const directives = (cacheControl ?? "").toLowerCase().split(",").map((directive) => directive.trim());
  if (directives.includes("no-store") || directives.includes("no-cache")) return MIN_CACHE_SECONDS;
  const maxAge = directives.map((directive) => /^max-age\s*=\s*"?(\d{1,12})"?$/.exec(directive)).find((match) => match !== null);
  const seconds = maxAge ? Number(maxAge[1]) : MIN_CACHE_SECONDS;
  return Math.min(MAX_CACHE_SECONDS, Math.max(MIN_CACHE_SECONDS, seconds));
}

function withDeadline<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new MetadataDocumentError(`not fetched within ${FETCH_TIMEOUT_MS / 1000} seconds`));
    }, FETCH_TIMEOUT_MS);
  });
  return Promise.race([work(controller.signal), deadline]).finally(() => {
    clearTimeout(timer);
    controller.abort();
  });
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

/**
 * Fetches `url` by the rules above. `insecureOrigin` is CLIENT_ID_METADATA_INSECURE_ORIGIN (or null): the
 * one origin fetched over http and without the address check.
 */
export function fetchMetadataDocument(url: URL, insecureOrigin: string | null): Promise<FetchedDocument> {
  const insecure = insecureOrigin !== null && url.protocol === "http:" && url.origin === insecureOrigin;
  if (url.protocol !== "https:" && !insecure) return Promise.reject(new MetadataDocumentError("must be fetched over https"));
  return withDeadline(async (signal) => {
    let target;
    try {
      target = await checkedAddress(url, insecure);
    } catch (error) {
      throw error instanceof OutboundAddressError ? new MetadataDocumentError(error.message) : error;
    }
    if (signal.aborted) throw new MetadataDocumentError("fetch abandoned");
    return await new Promise<FetchedDocument>((resolve, reject) => {
      const fail = (message: string) => {
        request.destroy();
        reject(new MetadataDocumentError(message));
      };
      const request = pinnedRequest(url, target, { method: "GET", headers: { accept: "application/json" }, signal }, (response) => {
        const status = response.statusCode ?? 0;
        if (status !== 200) return fail(status >= 300 && status < 400 ? `answered ${status}: redirects are not followed` : `answered ${status}, not 200`);
        if (!JSON_TYPE.test(response.headers["content-type"] ?? "")) return fail("answered a body that is not JSON (Content-Type)");
        if (Number(response.headers["content-length"] ?? 0) > MAX_DOCUMENT_BYTES) return fail("larger than 64 KiB");
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_DOCUMENT_BYTES) return fail("larger than 64 KiB");
          chunks.push(chunk);
        });
        response.on("error", () => fail("could not be read"));
        response.on("end", () => {
          try {
            resolve({ body: JSON.parse(Buffer.concat(chunks).toString("utf8")), cacheSeconds: cacheSeconds(response.headers["cache-control"]) });
          } catch {
            reject(new MetadataDocumentError("answered a body that is not JSON"));
          }
        });
      });
      request.on("error", (error: NodeJS.ErrnoException) => reject(new MetadataDocumentError(`could not be fetched (${error.code ?? error.message})`)));
      request.end();
    });
  });
}
