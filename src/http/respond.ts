// Response helpers: JSON with the contract's content type, and the no-store headers for anything that
// carries a token (RFC 6749 5.1).

export const JSON_TYPE = "application/json; charset=utf-8";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": JSON_TYPE, ...headers } });
}

export function noContent(headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 204, headers });
}
