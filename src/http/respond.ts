// Response helpers: JSON with the contract's content type, and the no-store headers for anything that
// carries a token (RFC 6749 5.1).
//
// Their bodies are text held as it is (TextResponse): a Response made with a body builds a web
// ReadableStream for it at once, and in Node that stream costs more than the whole rest of a bearer read
// (about 20 µs to make and 30 µs to read back, measured for issue 8). The fast lane (src/server/fast-lane.ts)
// writes the text to the socket as it is; any other reader (Next, the tests, a clone) gets an ordinary body,
// made from the same text when it first asks for it. Their headers are held the same way: undici's Headers
// converts and checks every name and value (about 0.7 µs a header, and again to read them back), so a
// TextResponse keeps the headers it was made with, and those set on it by setHeader() (CORS, src/http/route.ts),
// as plain lines until something asks for `headers`; the fast lane writes the lines as they are.

export const JSON_TYPE = "application/json; charset=utf-8";

export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/**
 * A Response whose body is a string: the same status, headers and body as `new Response(text, init)` to
 * every reader (init's headers must name the Content-Type); the stream behind `body` and the body methods
 * is made only when one of them is first used.
 */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

// A header name as Headers takes it (an HTTP token), and a value it keeps as it is (no NUL, CR or LF, no
// whitespace at either end, Latin-1 only). Anything else goes to Headers, which refuses it or normalises it.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PLAIN_VALUE = /^(?:[^\0\r\n\t \u0100-\uffff](?:[^\0\r\n\u0100-\uffff]*[^\0\r\n\t \u0100-\uffff])?)?$/;
const plainLine = (name: string, value: string) => TOKEN.test(name) && PLAIN_VALUE.test(value) && name.toLowerCase() !== "set-cookie";

/** A plain-object HeadersInit as [lower-case name, value] lines (in order, a name may repeat), or null when
 * Headers must take it itself. */
function plainLines(init: HeadersInit | undefined): Array<[string, string]> | null {
  if (init === undefined) return [];
  if (typeof init !== "object" || Object.getPrototypeOf(init) !== Object.prototype) return null;
  const lines: Array<[string, string]> = [];
  for (const name in init) {
    const value = (init as Record<string, unknown>)[name];
    if (typeof value !== "string" || !plainLine(name, value)) return null;
    lines.push([name.toLowerCase(), value]);
  }
  return lines;
}

export class TextResponse extends Response {
  readonly #text: string;
  #inner: Response | null = null;
  /** The headers as [lower-case name, value] lines, while nothing has asked for `headers`; then null. */
  #lines: Array<[string, string]> | null;

  constructor(text: string, init: ResponseInit) {
    const lines = plainLines(init.headers);
    super(null, lines ? { status: init.status, statusText: init.statusText } : init);
    if (NULL_BODY_STATUS.has(this.status)) throw new TypeError(`Response constructor: a ${this.status} response has no body`);
    this.#text = text;
    this.#lines = lines;
  }

  override get headers(): Headers {
    const headers = super.headers;
    const lines = this.#lines;
    if (lines) {
      this.#lines = null;
      for (const [name, value] of lines) headers.append(name, value);
    }
    return headers;
  }

  /** Headers.set() (or append()), on the lines while nothing has asked for `headers`. */
  setHeader(name: string, value: string, append = false): void {
    const lines = this.#lines;
    if (!lines || !plainLine(name, value)) {
      if (append) this.headers.append(name, value);
      else this.headers.set(name, value);
      return;
    }
    const lower = name.toLowerCase();
    if (!append) {
      for (let i = lines.length - 1; i >= 0; i--) if (lines[i]![0] === lower) lines.splice(i, 1);
    }
    lines.push([lower, value]);
  }

  /** The headers as Headers lists them (by name, a repeated name's values joined by ", "), while nothing has
   * asked for `headers`. */
  get unreadHeaderLines(): ReadonlyArray<readonly [string, string]> | undefined {
    const lines = this.#lines;
    if (!lines) return undefined;
    // An insertion sort (a handful of lines; stable, so a repeated name's values keep their order), merging.
    const listed: Array<[string, string]> = [];
    for (const [name, value] of lines) {
      let at = listed.length;
      while (at > 0 && listed[at - 1]![0] > name) at--;
      const before = listed[at - 1];
      if (before && before[0] === name) before[1] = `${before[1]}, ${value}`;
      else listed.splice(at, 0, [name, value]);
    }
    return listed;
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

/** A TextResponse's headers as [lower-case name, value] lines in Headers' order, while nothing has asked for
 * them; else undefined (read `headers` as usual). */
export function unreadHeaderLines(response: Response): ReadonlyArray<readonly [string, string]> | undefined {
  return response instanceof TextResponse ? response.unreadHeaderLines : undefined;
}

/** `response.headers.set(name, value)` (or `append`), without making a TextResponse's Headers. */
export function setHeader(response: Response, name: string, value: string, append = false): void {
  if (response instanceof TextResponse) response.setHeader(name, value, append);
  else if (append) response.headers.append(name, value);
  else response.headers.set(name, value);
}

export function noContent(headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 204, headers });
}
