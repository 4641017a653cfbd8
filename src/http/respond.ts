// Response helpers: JSON with the contract's content type, and the no-store headers for anything that
// carries a token (RFC 6749 5.1). json() also remembers the text it serialised, so that the fast lane
// (src/server/fast-lane.ts) writes it to the socket as it is instead of reading it back through the
// Response's stream; any other reader (Next, the tests) reads the Response as usual.

export const JSON_TYPE = "application/json; charset=utf-8";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

const serialised = new WeakMap<Response, string>();

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  const text = JSON.stringify(body);
  const response = new Response(text, { status, headers: { "Content-Type": JSON_TYPE, ...headers } });
  serialised.set(response, text);
  return response;
}

/** The body json() made this Response with, while nobody has read it; else undefined. */
export function serialisedBody(response: Response): string | undefined {
  return response.bodyUsed ? undefined : serialised.get(response);
}

export function noContent(headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 204, headers });
}
