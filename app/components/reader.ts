// The reader of a page, for dates (src/format/date-time.ts): the locale from Accept-Language and the time
// zone the browser reported (components/time-zone-cookie.tsx). Server components only.
import { cookies, headers } from "next/headers";
import { formatDateTime, readerFrom, type Reader } from "@/format/date-time";

export async function pageReader(): Promise<Reader> {
  const [headerList, cookieStore] = await Promise.all([headers(), cookies()]);
  return readerFrom({ acceptLanguage: headerList.get("accept-language"), timeZoneCookie: cookieStore.get("tz")?.value ?? null });
}

/** formatDateTime for this page's reader. */
export async function pageDateFormatter(): Promise<(date: Date) => string> {
  const reader = await pageReader();
  return (date) => formatDateTime(date, reader);
}
