import type { Metadata, Viewport } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import { SERVICE_NAME, SERVICE_PURPOSE } from "@/site";
import { SiteHeader } from "./components/site-header";
import { SkipLink } from "./components/skip-link";
import { TimeZoneCookie } from "./components/time-zone-cookie";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: SERVICE_NAME, template: `%s · ${SERVICE_NAME}` },
  description: SERVICE_PURPOSE,
  applicationName: SERVICE_NAME,
  icons: {
    icon: [
      { url: "/favicon.ico", sizes: "32x32" },
      { url: "/icon.svg", type: "image/svg+xml" },
    ],
    apple: [{ url: "/apple-touch-icon.png", sizes: "180x180" }],
  },
  manifest: "/manifest.webmanifest",
};

export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#ffffff" },
    { media: "(prefers-color-scheme: dark)", color: "#0f172a" },
  ],
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page is rendered per request, so that each carries the nonce of its own Content-Security-Policy
  // (proxy.ts); a prerendered page's scripts would have none and be refused.
  await connection();
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">
        <SkipLink />
        <SiteHeader />
        {children}
        <TimeZoneCookie />
      </body>
    </html>
  );
}
