// Rendering react-email components (emails/) for the outbox: HTML and plain text from one component, and the
// small formatting rules every mail shares. Dates in mail go through src/format/date-time.ts, like the pages'.
import type { ReactElement } from "react";

/** A subject is one line whatever the names hold. */
export const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** One e-mail component as HTML and as plain text. */
export async function renderHtmlAndText(element: ReactElement): Promise<{ html: string; text: string }> {
  const { render } = await import("@react-email/render"); // with the first mail (docs/design.md#memory)
  const [html, text] = await Promise.all([render(element), render(element, { plainText: true })]);
  return { html, text };
}
