// The collection envelope and paging of docs/rules/endpoints.md#collections, in one place for every list
// endpoint:
//   {"meta": {"limit", "offset", "total_count", "next", "previous"}, "objects": [...]}
// `limit` defaults to 20 (at most 100), `offset` to 0; `next`/`previous` are paths with their query string,
// or null. Filtering and sorting are not supported (docs/rules/endpoints.md#collections), so any other query
// parameter is a 400 rather than being silently ignored: a client that filters must learn that it got
// everything. A query parameter holding a control character is a 400 naming it (the input rule,
// src/http/input-text.ts).
import { badRequest, InputError } from "@/http/errors";
import { controlCharacterField } from "@/http/input-text";
import { fixedJson, fixedJsonText } from "@/http/respond";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export type PageRequest = { path: string; limit: number; offset: number };

export type Collection<T> = {
  meta: { limit: number; offset: number; total_count: number; next: string | null; previous: string | null };
  objects: T[];
};

const PAGING = new Set(["limit", "offset"]);

function integerParam(params: URLSearchParams, name: string, fallback: number, min: number, max: number, message: string): number {
  const values = params.getAll(name);
  if (values.length === 0) return fallback;
  if (values.length > 1 || !/^\d{1,15}$/.test(values[0]!)) throw badRequest(message);
  const value = Number(values[0]);
  if (value < min || value > max) throw badRequest(message);
  return value;
}

/** Reads `limit` and `offset` from a collection request; anything else in the query string is a 400. */
export function pageRequest(request: Request): PageRequest {
  const url = new URL(request.url);
  const refused = controlCharacterField(url.searchParams);
  if (refused !== null) throw new InputError(refused);
  for (const name of url.searchParams.keys()) {
    if (!PAGING.has(name)) throw badRequest("filtering is not supported");
  }
  return {
    path: url.pathname,
    limit: integerParam(url.searchParams, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT, `limit: must be an integer from 1 to ${MAX_LIMIT}`),
    offset: integerParam(url.searchParams, "offset", 0, 0, Number.MAX_SAFE_INTEGER, "offset: must be a non-negative integer"),
  };
}

const pagePath = (page: PageRequest, offset: number) => `${page.path}?limit=${page.limit}&offset=${offset}`;

/** The envelope for one page of `total` objects. */
export function collection<T>(page: PageRequest, total: number, objects: T[]): Collection<T> {
  const { limit, offset } = page;
  return {
    meta: {
      limit,
      offset,
      total_count: total,
      next: offset + limit < total ? pagePath(page, offset + limit) : null,
      previous: offset > 0 ? pagePath(page, Math.max(0, offset - limit)) : null,
    },
    objects,
  };
}

/**
 * A page as the collection-page cache keeps it (src/db/page-cache.ts): the envelope frozen with its JSON made
 * once (fixedJson()), that JSON's length, and until when it stays true (`validUntilMs`, Infinity: until
 * something is committed).
 */
export function keptCollection<T>(page: Collection<T>, validUntilMs = Infinity): { value: Collection<T>; size: number; validUntilMs: number } {
  const value = fixedJson(page);
  return { value, size: fixedJsonText(value)!.length, validUntilMs };
}

/** The name of a page in the collection-page cache: the collection, the viewer and the window. */
export const pageName = (collectionName: string, viewerId: number, page: PageRequest) => `${collectionName} ${viewerId} ${page.limit} ${page.offset} ${page.path}`;
