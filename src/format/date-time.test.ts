import { describe, expect, it } from "vitest";
import { formatDateTime, localeFromAcceptLanguage, readerFrom, validTimeZone } from "@/format/date-time";

const AT = new Date("2026-11-29T14:05:33.000Z");

describe("formatDateTime(): one format for pages and mail", () => {
  it("writes day, month name, year, time and the time zone; British English and UTC when the reader is unknown", () => {
    expect(formatDateTime(AT)).toBe("29 Nov 2026, 14:05 UTC");
  });

  it("follows the reader's locale and time zone, and always names the zone", () => {
    expect(formatDateTime(AT, { locale: "en-US", timeZone: "UTC" })).toBe("Nov 29, 2026, 2:05 PM UTC");
    expect(formatDateTime(AT, { locale: "en-GB", timeZone: "Europe/Berlin" })).toBe("29 Nov 2026, 15:05 CET");
    expect(formatDateTime(AT, { locale: "de-DE", timeZone: "America/New_York" })).toBe("29. Nov. 2026, 09:05 GMT-5");
  });

  it("takes the most preferred formattable language of Accept-Language, else British English", () => {
    expect(localeFromAcceptLanguage("fr-CH, fr;q=0.9, en;q=0.8")).toBe("fr-CH");
    expect(localeFromAcceptLanguage("en;q=0.5, de-DE;q=0.9")).toBe("de-DE");
    expect(localeFromAcceptLanguage("*")).toBe("en-GB");
    expect(localeFromAcceptLanguage("")).toBe("en-GB");
    expect(localeFromAcceptLanguage(null)).toBe("en-GB");
    expect(localeFromAcceptLanguage("not a language!!, x")).toBe("en-GB");
  });

  it("accepts only time zones the runtime knows, else UTC", () => {
    expect(validTimeZone("Europe/Berlin")).toBe("Europe/Berlin");
    expect(validTimeZone("Mars/Olympus_Mons")).toBe("UTC");
    expect(validTimeZone("'; drop")).toBe("UTC");
    expect(validTimeZone(undefined)).toBe("UTC");
    expect(readerFrom({ acceptLanguage: "en-US", timeZoneCookie: "Asia/Tokyo" })).toEqual({ locale: "en-US", timeZone: "Asia/Tokyo" });
  });
});
