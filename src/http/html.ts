// The few HTML answers that browser endpoints give without a page component: the authorization endpoint's
// error page (an unknown client or redirect URI must never redirect, CONTRACT.md 3).

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** `facts` are shown for developers under the message, each as `label: <code>value</code>`. */
export function htmlErrorPage(status: number, title: string, message: string, facts: [string, string][] = []): Response {
  const details = facts.map(([label, value]) => `<p>${escapeHtml(label)}: <code>${escapeHtml(value)}</code></p>`).join("");
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#0f172a}
h1{font-size:1.5rem}p{line-height:1.5}a{color:#1d4ed8}</style></head>
<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${details}<p><a href="/">Go to the home page</a></p></main></body></html>`;
  return new Response(body, {
    status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "X-Frame-Options": "DENY",
      "Referrer-Policy": "no-referrer",
    },
  });
}

export function redirect(location: string, status: 302 | 303 = 302, headers: Record<string, string> = {}): Response {
  return new Response(null, {
    status,
    headers: { Location: location, "Cache-Control": "no-store", Pragma: "no-cache", "Referrer-Policy": "no-referrer", ...headers },
  });
}
