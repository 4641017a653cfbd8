// Request bodies: JSON (application/json, or text/plain holding JSON so that browsers can post without a
// preflight) and, where allowed, application/x-www-form-urlencoded. Capped at 64 KiB (413), other types 415.
// The input rule (src/http/input-text.ts): a parameter, or a JSON string value or key at any depth, holding a
// control character is refused with a 400 naming it (the endpoint's error code on OAuth endpoints).
import { ApiError, InputError } from "@/http/errors";
import { controlCharacterField } from "@/http/input-text";

export const MAX_BODY_BYTES = 64 * 1024;

export type BodyOptions = {
  /** Accept application/x-www-form-urlencoded (token, revocation and introspection endpoints). */
  form?: boolean;
  /** The `error` string for a malformed body: an OAuth error code on OAuth endpoints ("invalid_request", or
   * "invalid_client_metadata" at registration), which then stands for every refusal of the body. */
  invalidMessage?: string;
  /** An empty body is allowed and reads as {}. */
  allowEmpty?: boolean;
};

const readAlready = new WeakMap<Request, Uint8Array>();

/**
 * The fast lane (src/server/fast-lane.ts) has read a request's body from the socket already (within the
 * limit, or just past it): readBody() takes these bytes instead of reading them again through the stream.
 */
export function bodyReadAlready(request: Request, bytes: Uint8Array): void {
  readAlready.set(request, bytes);
}

/** An OAuth error code (rather than a sentence): every body refusal of that endpoint answers it. */
const isCode = (invalid: string) => /^[a-z_]+$/.test(invalid);

function decodeUtf8(bytes: Uint8Array, invalid: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError(400, isCode(invalid) ? invalid : "body: not valid UTF-8");
  }
}

async function readCapped(request: Request, invalid: string): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared && Number(declared) > MAX_BODY_BYTES) throw new ApiError(413, tooLarge(invalid));
  const bytes = request.bodyUsed ? undefined : readAlready.get(request);
  if (bytes) {
    if (bytes.byteLength > MAX_BODY_BYTES) throw new ApiError(413, tooLarge(invalid));
    return decodeUtf8(bytes, invalid);
  }
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new ApiError(413, tooLarge(invalid));
    }
    chunks.push(value);
  }
  return decodeUtf8(Buffer.concat(chunks), invalid);
}

const tooLarge = (invalid: string) => (isCode(invalid) ? invalid : "body: larger than 64 KiB");

function mediaType(request: Request): string {
  return (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The parameters, once none holds a control character (src/http/input-text.ts). */
function checkedText<T extends Record<string, unknown>>(params: T, invalid: string): T {
  const field = controlCharacterField(params);
  if (field !== null) throw new InputError(field, isCode(invalid) ? invalid : undefined);
  return params;
}

/** Reads the body as a flat object of parameters. Form parameters that repeat are refused (RFC 6749 3.1). */
export async function readBody(request: Request, options: BodyOptions = {}): Promise<Record<string, unknown>> {
  const invalid = options.invalidMessage ?? "body: must be a JSON object";
  const type = mediaType(request);
  const text = await readCapped(request, invalid);
  if (text.trim() === "") {
    if (options.allowEmpty) return {};
    throw new ApiError(400, invalid);
  }
  if (type === "application/json" || type === "text/plain" || (type === "" && !options.form)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError(400, isCode(invalid) ? invalid : "body: malformed JSON");
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ApiError(400, invalid);
    return checkedText(value as Record<string, unknown>, invalid);
  }
  if (type === "application/x-www-form-urlencoded" && options.form) {
    const params = new URLSearchParams(text);
    const seen = new Set<string>();
    for (const key of params.keys()) {
      if (seen.has(key)) throw new ApiError(400, invalid);
      seen.add(key);
    }
    // Own properties for every name, as JSON.parse makes them (a name such as "constructor" is no repeat, and
    // "__proto__" is a parameter like any other, not the object's prototype).
    return checkedText(Object.fromEntries(params) as Record<string, string>, invalid);
  }
  throw new ApiError(
    415,
    isCode(invalid)
      ? invalid
      : `content type ${type || "(none)"} is not supported; send application/json`,
  );
}

/**
 * An application/x-www-form-urlencoded body as parameters in order, repeats kept, for an endpoint that reads
 * them as it reads a query (the authorization endpoint's POST, OpenID Connect Core 3.1.2.1): the same cap
 * (413), UTF-8 (400) and type (415) as readBody(), each answering `invalid`.
 */
export async function readFormParams(request: Request, invalid: string): Promise<URLSearchParams> {
  if (mediaType(request) !== "application/x-www-form-urlencoded") throw new ApiError(415, invalid);
  return new URLSearchParams(await readCapped(request, invalid));
}
