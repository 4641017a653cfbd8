// Response helpers: JSON with the contract's content type, and the no-store headers for anything that
// carries a token (RFC 6749 5.1).
//
// Their bodies are text held as it is (TextResponse): a Response made with a body builds a web
// ReadableStream for it at once, and in Node that stream costs more than the whole rest of a bearer read
// (about 20 µs to make and 30 µs to read back, measured for issue 8). The fast lane (src/server/fast-lane.ts)
// writes the text to the socket as it is; any other reader (Next, the tests, a clone) gets an ordinary body,
// made from the same text when it first asks for it.

export const JSON_TYPE = "application/json; charset=utf-8";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/**
 * A Response whose body is a string: the same status, headers and body as `new Response(text, init)` to
 * every reader (init's headers must name the Content-Type); the stream behind `body` and the body methods
 * is made only when one of them is first used.
 */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export class TextResponse extends Response {
  readonly #text: string;
  #inner: Response | null = null;

  constructor(text: string, init: ResponseInit) {
    super(null, init);
    if (NULL_BODY_STATUS.has(this.status)) throw new TypeError(`Response constructor: a ${this.status} response has no body`);
    this.#text = text;
  }

  /** The body as an ordinary Response's (same Content-Type, so that blob() and formData() agree). */
  #body(): Response {
    return (this.#inner ??= new Response(this.#text, { headers: { "Content-Type": this.headers.get("content-type") ?? "" } }));
  }

  /** The body's text while nobody has read it; else undefined. */
  get unreadText(): string | undefined {
    return this.#inner?.bodyUsed ? undefined : this.#text;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> {
    return this.#body().body!;
  }
  override get bodyUsed(): boolean {
    return this.#inner?.bodyUsed ?? false;
  }
  override text(): Promise<string> {
    return this.#body().text();
  }
  override json(): Promise<unknown> {
    return this.#body().json();
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.#body().arrayBuffer();
  }
  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#body().bytes();
  }
  override blob(): Promise<Blob> {
    return this.#body().blob();
  }
  override formData(): Promise<FormData> {
    return this.#body().formData();
  }
  override clone(): Response {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    return new TextResponse(this.#text, { status: this.status, statusText: this.statusText, headers: this.headers });
  }
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new TextResponse(JSON.stringify(body), { status, headers: { "Content-Type": JSON_TYPE, ...headers } });
}

/** The text a TextResponse holds, while nobody has read it; else undefined (read the Response as usual). */
export function unreadText(response: Response): string | undefined {
  return response instanceof TextResponse ? response.unreadText : undefined;
}

export function noContent(headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 204, headers });
}
