// The one date formatter of pages and mail: day, month name, year and time, in the reader's locale
// where it is known (a page's Accept-Language) and in the reader's time zone where it is known (the `tz`
// cookie the pages set from the browser), always with the time zone named ("29 Nov 2026, 14:05 UTC",
// "Nov 29, 2026, 3:05 PM GMT+1"), so that no date is ambiguous. Mail goes to a reader whose locale and time
// zone are unknown: British English and UTC. The month is a word, so day and month cannot be swapped.

export const DEFAULT_LOCALE = "en-GB";
export const DEFAULT_TIME_ZONE = "UTC";

export type Reader = { locale: string; timeZone: string };

export const DEFAULT_READER: Reader = { locale: DEFAULT_LOCALE, timeZone: DEFAULT_TIME_ZONE };

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(reader: Reader): Intl.DateTimeFormat {
  const key = `${reader.locale}|${reader.timeZone}`;
  let found = formatters.get(key);
  if (!found) {
    found = new Intl.DateTimeFormat(reader.locale, {
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "numeric",
      minute: "2-digit",
      timeZone: reader.timeZone,
      timeZoneName: "short",
    });
    if (formatters.size > 200) formatters.clear();
    formatters.set(key, found);
  }
  return found;
}

/** "29 Nov 2026, 14:05 UTC" (en-GB, UTC), or as the reader reads dates. */
export function formatDateTime(date: Date, reader: Reader = DEFAULT_READER): string {
  return formatter(reader).format(date);
}

/** A BCP 47 tag the runtime can format with, or null. */
export function supportedLocale(tag: string | null | undefined): string | null {
  if (!tag || tag.length > 35) return null;
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([tag])[0] ?? null;
  } catch {
    return null;
  }
}

/** The first language of an Accept-Language header that can be formatted, else the default. */
export function localeFromAcceptLanguage(header: string | null | undefined): string {
  const tags = (header ?? "")
    .split(",")
    .map((part) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q) };
    })
    .filter((entry) => entry.tag && entry.tag !== "*" && entry.q > 0)
    .sort((a, b) => b.q - a.q);
  for (const { tag } of tags.slice(0, 10)) {
    const locale = supportedLocale(tag);
    if (locale) return locale;
  }
  return DEFAULT_LOCALE;
}

/** An IANA time zone name the runtime knows ("Europe/Berlin"), else the default. */
export function validTimeZone(name: string | null | undefined): string {
  if (!name || name.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(name)) return DEFAULT_TIME_ZONE;
  try {
    return new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return DEFAULT_TIME_ZONE;
  }
}

export function readerFrom(headers: { acceptLanguage: string | null; timeZoneCookie: string | null }): Reader {
  return { locale: localeFromAcceptLanguage(headers.acceptLanguage), timeZone: validTimeZone(headers.timeZoneCookie) };
}
