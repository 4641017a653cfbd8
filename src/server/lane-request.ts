// The Request that the fast lane (src/server/fast-lane.ts, docs/design.md) hands to the route handlers: what a
// handler reads of a Web Request (method, url, headers, the body through src/http/body.ts) without what it
// does not, built when first asked for. Undici's Request constructor costs more than the rest of a health
// check (about 10 µs here: an AbortController, WebIDL conversions of every header, the URL), and handlers
// read three of its fields.
//
// It answers every member of the Request interface as `new Request(url, { method, headers, body })` would:
// the URL as the WHATWG parser serialises it (requestUrl(), which skips the parser where it would change
// nothing), the headers as a real Headers (made on first use, from the
// header lines Node parsed), and for everything else (the body as a stream or read by a Request method,
// clone(), signal, the fetch-only fields) a real Request made from the same parts on first use. It is not
// `instanceof Request`: nothing in app/ or src/ asks, and handlers stay plain (request: Request) functions.
import type { IncomingHttpHeaders } from "node:http";

/** Undici's Request normalises these methods' case (the Fetch standard's "normalize a method"). */
const NORMALISED = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);

// Request targets that the WHATWG URL parser writes back as they are (characters outside its percent-encode
// sets, no dot segments): for these the URL is the origin and the target, without parsing.
const PLAIN_TARGET = /^(?:\/[\w\-.~!$&'()*+,;=:@%]*)+(?:\?[\w\-.~!$&()*+,;=:@%/?]*)?$/;
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?]|$)/i;

/**
 * The URL of a request target (the request line's path and query, or an absolute URL) as `new URL(target,
 * origin).href` writes it. `origin` must be an origin as URL writes one (URL.origin).
 */
export function requestUrl(origin: string, target: string): string {
  if (PLAIN_TARGET.test(target) && !DOT_SEGMENT.test(target)) return origin + target;
  return new URL(target.startsWith("/") ? origin + target : target, origin + "/").href;
}

// A header name as the Fetch standard takes it (an HTTP token); any other name goes to Headers, which refuses it.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// HTTP whitespace at either end of a value, which Headers would strip (Node's parser has already). Its two
// ends looked at, not a regular expression (whose "at the end" alternative is tried at every position).
const isHttpSpace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
const edgeSpace = (value: string) => value.length > 0 && (isHttpSpace(value.charCodeAt(0)) || isHttpSpace(value.charCodeAt(value.length - 1)));

/**
 * A request's Headers, answering get() and has() from the header lines Node parsed (what a handler asks of
 * them: Authorization, Cookie, X-Forwarded-For) without building the list: copying every header into a
 * Headers costs a bearer read about 4 µs (WebIDL conversions of each name and value). Anything else (iterating,
 * changing, getSetCookie(), a name Headers would refuse, a value it would trim, a repeated header) first fills
 * the real Headers from the same lines, once, and from then on everything is the real Headers'. Reads see
 * exactly what `new Headers(lines)` would answer.
 */
export class LaneHeaders extends Headers {
  #source: IncomingHttpHeaders | null;

  constructor(source: IncomingHttpHeaders) {
    super();
    this.#source = source;
  }

  /** Node's value for a name when get() may answer it as it is; undefined for "ask the real Headers". */
  #plain(name: string): string | null | undefined {
    const source = this.#source;
    if (source === null || typeof name !== "string" || !TOKEN.test(name)) return undefined;
    const value = source[name.toLowerCase()];
    if (value === undefined) return null;
    return typeof value === "string" && !edgeSpace(value) ? value : undefined;
  }

  #filled(): this {
    const source = this.#source;
    if (source !== null) {
      this.#source = null;
      for (const name in source) {
        const value = source[name];
        if (typeof value === "string") super.append(name, value);
        else if (value) for (const item of value) super.append(name, item);
      }
    }
    return this;
  }

  override get(name: string): string | null {
    const plain = this.#plain(name);
    return plain === undefined ? this.#filled() && super.get(name) : plain;
  }
  override has(name: string): boolean {
    const plain = this.#plain(name);
    return plain === undefined ? this.#filled() && super.has(name) : plain !== null;
  }
  override append(name: string, value: string): void {
    this.#filled();
    super.append(name, value);
  }
  override set(name: string, value: string): void {
    this.#filled();
    super.set(name, value);
  }
  override delete(name: string): void {
    this.#filled();
    super.delete(name);
  }
  override getSetCookie(): string[] {
    return this.#filled() && super.getSetCookie();
  }
  override forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    this.#filled();
    super.forEach(callback, thisArg);
  }
  override entries(): HeadersIterator<[string, string]> {
    return this.#filled() && super.entries();
  }
  override keys(): HeadersIterator<string> {
    return this.#filled() && super.keys();
  }
  override values(): HeadersIterator<string> {
    return this.#filled() && super.values();
  }
  override [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.#filled() && super[Symbol.iterator]();
  }
}

export class LaneRequest implements Request {
  readonly method: string;
  readonly url: string;
  readonly #source: IncomingHttpHeaders;
  readonly #bytes: Uint8Array<ArrayBuffer> | null;
  #headers: Headers | null = null;
  #request: Request | null = null;

  /** `url` as requestUrl() writes it; `bytes` the whole body as read from the socket (null without one). */
  constructor(method: string, url: string, headers: IncomingHttpHeaders, bytes: Uint8Array<ArrayBuffer> | null) {
    const upper = method.toUpperCase();
    this.method = NORMALISED.has(upper) ? upper : method;
    this.url = url;
    this.#source = headers;
    this.#bytes = bytes;
  }

  get headers(): Headers {
    return (this.#headers ??= new LaneHeaders(this.#source));
  }

  /** The same request as a real Request (made once, when something beyond the fields above is asked for). */
  #real(): Request {
    return (this.#request ??= new Request(this.url, { method: this.method, headers: [...this.headers], body: this.#bytes }));
  }

  get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    return this.#bytes === null ? null : this.#real().body;
  }
  get bodyUsed(): boolean {
    return this.#request?.bodyUsed ?? false;
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#real().arrayBuffer();
  }
  blob(): Promise<Blob> {
    return this.#real().blob();
  }
  bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#real().bytes();
  }
  formData(): Promise<FormData> {
    return this.#real().formData();
  }
  json(): Promise<unknown> {
    return this.#real().json();
  }
  text(): Promise<string> {
    return this.#real().text();
  }
  clone(): Request {
    return this.#real().clone();
  }
  get signal(): AbortSignal {
    return this.#real().signal;
  }
  get cache(): RequestCache {
    return this.#real().cache;
  }
  get credentials(): RequestCredentials {
    return this.#real().credentials;
  }
  get destination(): RequestDestination {
    return this.#real().destination;
  }
  get integrity(): string {
    return this.#real().integrity;
  }
  get keepalive(): boolean {
    return this.#real().keepalive;
  }
  get mode(): RequestMode {
    return this.#real().mode;
  }
  get redirect(): RequestRedirect {
    return this.#real().redirect;
  }
  get referrer(): string {
    return this.#real().referrer;
  }
  get referrerPolicy(): ReferrerPolicy {
    return this.#real().referrerPolicy;
  }
  get [Symbol.toStringTag](): string {
    return "Request";
  }
}
