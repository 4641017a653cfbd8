"use client";
// The friendly page when even the layout could not be rendered (its header reads the signed-in user, so a
// database outage lands here: docs/rules/operations.md#database-outages). It replaces the root layout, so it
// has its own html and body.
import "./globals.css";

export default function GlobalError({ error }: { error: Error & { digest?: string } }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">
        <main className="mx-auto w-full max-w-md px-4 py-8 sm:py-12">
          <h1 className="text-2xl font-semibold tracking-tight sm:text-3xl">This page is unavailable right now</h1>
          <p className="mt-6">
            Something on our side is not answering, usually the database for a moment. Nothing you did caused this. Wait a few seconds and
            reload the page.
          </p>
          {/* A plain link, not a script: it works whatever failed. */}
          <p className="mt-4">
            <a className="text-blue-700 underline" href="">
              Reload
            </a>
          </p>
          {error.digest ? <p className="mt-4 text-xs text-slate-500">Reference: {error.digest}</p> : null}
        </main>
      </body>
    </html>
  );
}
