// Rendering react-email components (emails/) for the outbox: HTML and plain text from one component, and the
// small formatting rules every mail shares.
import type { ReactElement } from "react";
import { render } from "@react-email/render";

/** "2026-11-29 14:05 UTC": unambiguous wherever the reader is. */
export function formatExpiry(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** A subject is one line whatever the names hold. */
export const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** One e-mail component as HTML and as plain text. */
export async function renderHtmlAndText(element: ReactElement): Promise<{ html: string; text: string }> {
  const [html, text] = await Promise.all([render(element), render(element, { plainText: true })]);
  return { html, text };
}
