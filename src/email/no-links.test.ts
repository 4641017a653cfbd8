import { describe, expect, it } from "vitest";
import { noLinks } from "@/email/no-links";

// What linkifiers (Gmail, Outlook, Apple Mail, linkify-it) turn into links: host names, URLs and addresses.
const LINKABLE = /(https?:\/\/|www\.|[a-z0-9-]+\.[a-z]{2,}|[^\s@]+@[a-z0-9-]+\.[a-z]{2,})/i;

describe("noLinks(): names in mail are not linkable", () => {
  it.each([
    ["evil.example", "evil[.]example"],
    ["Rita (see https://evil.example/login)", "Rita (see https[:]//evil[.]example/login)"],
    ["www.evil.example", "www[.]evil[.]example"],
    ["boss@corp.example", "boss[@]corp[.]example"],
    ["evil。example", "evil[.]example"],
    ["evil．example", "evil[.]example"],
    ["javascript://x", "javascript[:]//x"],
  ])("breaks %j into %j", (name, expected) => {
    expect(noLinks(name)).toBe(expected);
    expect(noLinks(name)).not.toMatch(LINKABLE);
  });

  it.each(["Rita Requester", "J. R. Smith", "Dr. Who", "O'Brien & Sons", "Café 2.0 ", "Tom: the cat"])("leaves an ordinary name %j readable", (name) => {
    expect(noLinks(name).replace(/\[(.)\]/g, "$1")).toBe(name);
  });

  it("leaves names without link-like sequences unchanged", () => {
    for (const name of ["Rita Requester", "J. R. Smith", "Dr. Who", "Tom: the cat"]) expect(noLinks(name)).toBe(name);
  });
});
