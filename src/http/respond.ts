// Response helpers: JSON with the content type of docs/rules/endpoints.md#bodies, and the no-store headers for
// anything that carries a token (RFC 6749 5.1).
//
// Their bodies are text held as it is (TextResponse): a Response made with a body builds a web
// ReadableStream for it at once, and in Node that stream costs more than the whole rest of a bearer read
// (about 20 µs to make and 30 µs to read back, as measured). The fast lane (src/server/fast-lane.ts)
// writes the text to the socket as it is; any other reader (Next, the tests, a clone) gets an ordinary body,
// made from the same text when it first asks for it. Their headers are held the same way: undici's Headers
// converts and checks every name and value (about 0.7 µs a header, and again to read them back), so a
// TextResponse keeps the headers it was made with, and those set on it by setHeader() and setHeaderLines()
// (CORS, src/http/route.ts), as plain lines until something asks for `headers`; the fast lane writes the
// lines as they are. Lines used on every response (JSON's Content-Type, CORS) are checked once, at start
// (checkedLines()), and a value whose JSON cannot change (fixedJson(): a caller's own representation, read
// from the token cache) is written from JSON made once.

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

/** Header lines checked once (as plain lines, names lower-cased), to set on many responses without checking
 * them again (checkedLines(), setHeaderLines()). */
export type CheckedLines = ReadonlyArray<readonly [string, string]>;

/** `headers` as CheckedLines; throws for a line a TextResponse could not keep as it is. */
export function checkedLines(headers: Record<string, string>): CheckedLines {
  const lines = plainLines(headers);
  if (!lines) throw new TypeError("checkedLines: a header name or value Headers would refuse or change");
  return Object.freeze(lines.map((line) => Object.freeze(line)));
}

const byName = (a: readonly [string, string], b: readonly [string, string]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

export class TextResponse extends Response {
  readonly #text: string;
  #inner: Response | null = null;
  /** The headers as [lower-case name, value] lines, while nothing has asked for `headers`; then null. */
  #lines: Array<readonly [string, string]> | null;

  /** `checked`: the headers as lines checked already (init.headers is then not read). */
  constructor(text: string, init: ResponseInit, checked?: CheckedLines) {
    const lines = checked ? [...checked] : plainLines(init.headers);
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

  /** setHeader() of each of the lines, which were checked already (checkedLines()). */
  setLines(checked: CheckedLines, append = false): void {
    const lines = this.#lines;
    if (!lines) {
      for (const [name, value] of checked) this.setHeader(name, value, append);
      return;
    }
    for (const line of checked) {
      if (!append) {
        for (let i = lines.length - 1; i >= 0; i--) if (lines[i]![0] === line[0]) lines.splice(i, 1);
      }
      lines.push(line);
    }
  }

  /** The headers as Headers lists them (by name, a repeated name's values joined by ", "), while nothing has
   * asked for `headers`. */
  get unreadHeaderLines(): ReadonlyArray<readonly [string, string]> | undefined {
    const lines = this.#lines;
    if (!lines) return undefined;
    // Sorted (stable: a repeated name's values keep their order), then a repeated name's lines merged.
    const sorted = lines.length > 1 ? lines.slice().sort(byName) : lines;
    let listed: Array<readonly [string, string]> | null = null;
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]![0] !== sorted[i - 1]![0]) continue;
      listed = [];
      for (const line of sorted) {
        const before = listed[listed.length - 1];
        if (before && before[0] === line[0]) listed[listed.length - 1] = [line[0], `${before[1]}, ${line[1]}`];
        else listed.push(line);
      }
      break;
    }
    return listed ?? sorted;
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

const JSON_LINES = checkedLines({ "Content-Type": JSON_TYPE });

const jsonOfFixed = new WeakMap<object, string>();

/** `value`, frozen (with every object in it), its JSON made now and kept: json() of it then looks the text up. */
export function fixedJson<T extends object>(value: T): T {
  const freeze = (item: unknown) => {
    if (typeof item !== "object" || item === null) return;
    Object.freeze(item);
    for (const child of Object.values(item)) freeze(child);
  };
  freeze(value);
  jsonOfFixed.set(value, JSON.stringify(value));
  return value;
}

/** The JSON text fixedJson() made for `value`, or undefined. */
export function fixedJsonText(value: object): string | undefined {
  return jsonOfFixed.get(value);
}

export function json(body: unknown, status = 200, headers?: Record<string, string>): Response {
  const text = (typeof body === "object" && body !== null && jsonOfFixed.get(body)) || JSON.stringify(body);
  return headers ? new TextResponse(text, { status, headers: { "Content-Type": JSON_TYPE, ...headers } }) : new TextResponse(text, { status }, JSON_LINES);
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

/** setHeader() of each of the lines (checkedLines()): on a TextResponse, without checking them again. */
export function setHeaderLines(response: Response, checked: CheckedLines, append = false): void {
  if (response instanceof TextResponse) response.setLines(checked, append);
  else for (const [name, value] of checked) setHeader(response, name, value, append);
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
