// Request bodies: JSON (application/json, or text/plain holding JSON so that browsers can post without a
// preflight) and, where allowed, application/x-www-form-urlencoded. Capped at 64 KiB (413), other types 415.
import { ApiError } from "@/http/errors";

export const MAX_BODY_BYTES = 64 * 1024;

export type BodyOptions = {
  /** Accept application/x-www-form-urlencoded (token, revocation and introspection endpoints). */
  form?: boolean;
  /** The `error` string for a malformed body: "invalid_request" on OAuth endpoints. */
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

function decodeUtf8(bytes: Uint8Array, invalid: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError(400, invalid === "invalid_request" ? invalid : "body: not valid UTF-8");
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

const tooLarge = (invalid: string) => (invalid === "invalid_request" ? invalid : "body: larger than 64 KiB");

function mediaType(request: Request): string {
  return (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
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
      throw new ApiError(400, invalid === "invalid_request" ? invalid : "body: malformed JSON");
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ApiError(400, invalid);
    return value as Record<string, unknown>;
  }
  if (type === "application/x-www-form-urlencoded" && options.form) {
    const params = new URLSearchParams(text);
    const out: Record<string, string> = {};
    for (const [key, value] of params) {
      if (key in out) throw new ApiError(400, invalid);
      out[key] = value;
    }
    return out;
  }
  throw new ApiError(
    415,
    invalid === "invalid_request"
      ? invalid
      : `content type ${type || "(none)"} is not supported; send application/json`,
  );
}
