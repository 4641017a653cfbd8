"use client";

// Pages show dates in the reader's time zone (src/format/date-time.ts). The server cannot know it, so the
// browser says it once in a cookie (`tz`, an IANA name such as "Europe/Berlin"; nothing else), and the page
// is rendered again when it differs from what the server assumed (UTC until told).
import { useRouter } from "next/navigation";
import { useEffect } from "react";

export const TIME_ZONE_COOKIE = "tz";

export function TimeZoneCookie() {
  const router = useRouter();
  useEffect(() => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!zone) return;
    const sent = document.cookie
      .split("; ")
      .find((cookie) => cookie.startsWith(`${TIME_ZONE_COOKIE}=`))
      ?.slice(TIME_ZONE_COOKIE.length + 1);
    const assumed = sent ? decodeURIComponent(sent) : "UTC";
    if (sent && assumed === zone) return;
    document.cookie = `${TIME_ZONE_COOKIE}=${encodeURIComponent(zone)}; path=/; max-age=31536000; samesite=lax`;
    if (assumed !== zone) router.refresh();
  }, [router]);
  return null;
}
