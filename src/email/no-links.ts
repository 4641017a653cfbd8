// Names that people chose (user names, bundle names), written into mail so that mail clients do not turn
// them into links (docs/rules/permission-requests.md#who-sees-an-e-mail-address): a name like "Rita (see
// evil.example/login)" must not become a clickable link in a mail the service sends. Mail clients link
// anything shaped like a host name, a URL or an address, in plain text and in HTML alike; so the dots, `:/`
// and `@` inside a word are broken visibly ("evil[.]example", "https[:]//"), the way security advisories
// "defang" addresses. A visible mark also tells the reader it is not a link. Names without such sequences ("J.
// R. Smith") are unchanged.

/** Dots (also the ideographic and full-width ones some linkifiers accept) with something on both sides. */
const INNER_DOT = /(?<=\S)[.\u3002\uFF0E\uFF61](?=\S)/g;
const SCHEME_COLON = /:(?=\/)/g;
const INNER_AT = /(?<=\S)@(?=\S)/g;

export function noLinks(name: string): string {
  return name.replace(INNER_DOT, "[.]").replace(SCHEME_COLON, "[:]").replace(INNER_AT, "[@]");
}
