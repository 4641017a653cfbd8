// TextResponse (src/http/respond.ts): every reader sees what `new Response(text, init)` would give it, while
// the fast lane takes the text as it is.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkedLines, fixedJson, json, JSON_TYPE, setHeader, setHeaderLines, TextResponse, unreadHeaderLines, unreadText } from "@/http/respond";

const INIT = { status: 201, statusText: "Made", headers: { "Content-Type": JSON_TYPE, "X-Extra": "1" } };
const TEXT = JSON.stringify({ name: "Zoë", n: 1 });

/** The same response both ways, so that every comparison is against undici's own Response. */
const both = () => ({ ours: new TextResponse(TEXT, INIT), theirs: new Response(TEXT, INIT) });

describe("TextResponse", () => {
  it("has the status, status text and headers of a Response made with the same text", () => {
    const { ours, theirs } = both();
    expect(ours).toBeInstanceOf(Response);
    expect([ours.status, ours.statusText, ours.ok, ours.type]).toEqual([theirs.status, theirs.statusText, theirs.ok, theirs.type]);
    expect([...ours.headers]).toEqual([...theirs.headers]);
  });

  it("reads as the same body through text(), json(), arrayBuffer(), bytes(), blob() and the stream", async () => {
    let pair = both();
    expect(await pair.ours.text()).toBe(await pair.theirs.text());
    pair = both();
    expect(await pair.ours.json()).toEqual(await pair.theirs.json());
    pair = both();
    expect(new Uint8Array(await pair.ours.arrayBuffer())).toEqual(new Uint8Array(await pair.theirs.arrayBuffer()));
    pair = both();
    expect(await pair.ours.bytes()).toEqual(await pair.theirs.bytes());
    pair = both();
    const [ourBlob, theirBlob] = [await pair.ours.blob(), await pair.theirs.blob()];
    expect([ourBlob.type, ourBlob.size]).toEqual([theirBlob.type, theirBlob.size]);
    pair = both();
    expect(await new Response(pair.ours.body).text()).toBe(TEXT);
    expect(pair.ours.bodyUsed).toBe(true);
  });

  it("is read once: bodyUsed, a second read and clone() after a read behave as a Response's", async () => {
    const { ours, theirs } = both();
    expect(ours.bodyUsed).toBe(false);
    const copy = ours.clone();
    expect(copy).toBeInstanceOf(TextResponse);
    expect([copy.status, copy.statusText, [...copy.headers]]).toEqual([201, "Made", [...theirs.headers]]);
    await ours.text();
    await theirs.text();
    expect(ours.bodyUsed).toBe(theirs.bodyUsed);
    await expect(ours.text()).rejects.toThrow(TypeError);
    expect(() => ours.clone()).toThrow(TypeError);
    expect(await copy.text()).toBe(TEXT); // the clone kept its own body
  });

  it("hands its text to the fast lane only while nobody has read it", async () => {
    const response = json({ a: 1 }, 200, { "Cache-Control": "no-store" });
    expect(unreadText(response)).toBe('{"a":1}');
    expect(unreadText(new Response('{"a":1}'))).toBeUndefined();
    await response.text();
    expect(unreadText(response)).toBeUndefined();
  });

  it("refuses a body on a null-body status, as a Response does", () => {
    expect(() => new Response("x", { status: 204 })).toThrow(TypeError);
    expect(() => new TextResponse("x", { status: 204, headers: { "Content-Type": JSON_TYPE } })).toThrow(TypeError);
  });

  it("reaches a reader that re-wraps its body, as Next does for a route handler's answer", async () => {
    const wrapped = new Response(json({ ok: true }, 202).body, { status: 202 });
    expect(wrapped.status).toBe(202);
    expect(await wrapped.json()).toEqual({ ok: true });
  });

  describe("headers held as lines", () => {
    const name = fc.oneof(
      fc.constantFrom("Content-Type", "content-type", "Vary", "vary", "Cache-Control", "WWW-Authenticate", "Set-Cookie", "X-A", "x-a"),
      fc.constantFrom("bad name", "", "é", "a:b"),
    );
    const value = fc.oneof(fc.constantFrom("no-store", "Origin", "", " padded ", "a\tb", "é", "Ā", "line\nbreak", "a, b"), fc.string({ maxLength: 6 }));
    const record = fc.dictionary(name, value, { maxKeys: 4 });
    const change = fc.tuple(name, value, fc.boolean());
    /** What a reader sees (or the error it meets), of ours or undici's own Response. */
    const outcome = (make: () => Response, changes: Array<[string, string, boolean]>, set: (r: Response, n: string, v: string, a: boolean) => void) => {
      let response: Response;
      try {
        response = make();
      } catch (error) {
        return `constructor: ${(error as Error).name}`;
      }
      const errors = changes.map(([n, v, a]) => {
        try {
          set(response, n, v, a);
          return "ok";
        } catch (error) {
          return (error as Error).name;
        }
      });
      const lines = unreadHeaderLines(response)?.map(([n, v]) => [n, v]);
      const listed = [...response.headers];
      return { errors, listed, lines: lines ?? listed, vary: response.headers.get("vary"), cookies: response.headers.getSetCookie() };
    };

    it("reads, before and after any setHeader(), as a Response with the same headers set through Headers", () => {
      fc.assert(
        fc.property(record, fc.array(change, { maxLength: 4 }), (some, changes) => {
          const headers = { "Content-Type": JSON_TYPE, ...some }; // (a Response with a text body and none adds text/plain)
          const theirs = outcome(() => new Response("x", { status: 200, headers }), changes, (r, n, v, a) => (a ? r.headers.append(n, v) : r.headers.set(n, v)));
          const ours = outcome(() => new TextResponse("x", { status: 200, headers }), changes, setHeader);
          expect(ours).toEqual(theirs);
        }),
        { numRuns: 4000 },
      );
    });

    it("reads, after lines checked once are set on it, as a Response with the same headers set through Headers", () => {
      const group = fc.tuple(record, fc.boolean());
      fc.assert(
        fc.property(record, fc.array(group, { maxLength: 3 }), (some, groups) => {
          const headers = { "Content-Type": JSON_TYPE, ...some };
          // Each group through Headers one line at a time; ours as lines checked once where checkedLines() takes them.
          const changes = groups.flatMap(([lines, append]) => Object.entries(lines).map(([n, v]) => [n, v, append] as [string, string, boolean]));
          const theirs = outcome(() => new Response("x", { status: 200, headers }), changes, (r, n, v, a) => (a ? r.headers.append(n, v) : r.headers.set(n, v)));
          const ours = outcome(() => new TextResponse("x", { status: 200, headers }), [], () => {});
          if (typeof ours === "string" || typeof theirs === "string") {
            expect(ours).toEqual(theirs); // refused by the constructor, both
            return;
          }
          const response = new TextResponse("x", { status: 200, headers });
          const errors: string[] = [];
          for (const [lines, append] of groups) {
            let checked: ReturnType<typeof checkedLines> | null = null;
            try {
              checked = checkedLines(lines);
            } catch {
              // not plain lines: set one by one, as Headers takes them (or refuses them)
            }
            if (checked) {
              setHeaderLines(response, checked, append);
              errors.push(...checked.map(() => "ok"));
            } else {
              for (const [n, v] of Object.entries(lines)) {
                try {
                  setHeader(response, n, v, append);
                  errors.push("ok");
                } catch (error) {
                  errors.push((error as Error).name);
                }
              }
            }
          }
          const lines = unreadHeaderLines(response)?.map(([n, v]) => [n, v]);
          const listed = [...response.headers];
          expect({ errors, listed, lines: lines ?? listed, vary: response.headers.get("vary"), cookies: response.headers.getSetCookie() }).toEqual(theirs);
        }),
        { numRuns: 2000 },
      );
    });

    it("checked once, are refused when Headers would refuse or change them, and shared lines stay each response's own", () => {
      expect(() => checkedLines({ "X-A": "line\nbreak" })).toThrow(TypeError);
      expect(() => checkedLines({ "X-A": " padded" })).toThrow(TypeError);
      expect(() => checkedLines({ "bad name": "1" })).toThrow(TypeError);
      const vary = checkedLines({ Vary: "Origin" });
      const first = json({ a: 1 });
      const second = json({ b: 2 });
      setHeaderLines(first, vary, true);
      setHeaderLines(second, vary, true);
      setHeader(first, "Vary", "Accept", true);
      expect(unreadHeaderLines(second)).toEqual([
        ["content-type", JSON_TYPE],
        ["vary", "Origin"],
      ]);
      expect(unreadHeaderLines(first)).toEqual([
        ["content-type", JSON_TYPE],
        ["vary", "Origin, Accept"],
      ]);
      expect(unreadHeaderLines(json({ c: 3 }))).toEqual([["content-type", JSON_TYPE]]);
    });

    it("are handed to the fast lane only while nothing has asked for headers", () => {
      const response = json({ a: 1 }, 200, { "Cache-Control": "no-store" });
      setHeader(response, "Vary", "Origin", true);
      setHeader(response, "Vary", "Accept", true);
      expect(unreadHeaderLines(response)).toEqual([
        ["cache-control", "no-store"],
        ["content-type", JSON_TYPE],
        ["vary", "Origin, Accept"],
      ]);
      expect(response.headers.get("vary")).toBe("Origin, Accept");
      expect(unreadHeaderLines(response)).toBeUndefined();
      expect(unreadHeaderLines(new Response("x"))).toBeUndefined();
      setHeader(response, "X-After", "1");
      expect(response.headers.get("x-after")).toBe("1");
    });
  });

  describe("fixedJson()", () => {
    it("freezes the value and everything in it, and json() of it answers the JSON of the value as it was made", async () => {
      const value = fixedJson({ id: 7, name: "Zoë", tags: ["a", { b: 1 }] });
      expect(Object.isFrozen(value) && Object.isFrozen(value.tags) && Object.isFrozen(value.tags[1])).toBe(true);
      expect(() => {
        (value as { name: string }).name = "changed";
      }).toThrow(TypeError);
      const response = json(value);
      expect(unreadText(response)).toBe(JSON.stringify({ id: 7, name: "Zoë", tags: ["a", { b: 1 }] }));
      expect(await json(value, 201).json()).toEqual({ id: 7, name: "Zoë", tags: ["a", { b: 1 }] });
      // Any other value, frozen or not, is written as it is now.
      const plain = Object.freeze({ id: 8 });
      expect(unreadText(json(plain))).toBe('{"id":8}');
    });
  });
});
