// A local stand-in for Resend's HTTP API (POST /emails), the one thing the tests stand in for: the mail
// provider's network call. Point an instance at it with RESEND_BASE_URL (the Resend SDK's own variable).
// It records what it was sent, answers like Resend (`{"id"}`, or Resend's error object while `failing`), and
// can hold its answers until the test lets them go.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export type ReceivedMail = { headers: IncomingHttpHeaders; body: Record<string, unknown> };

export async function startResendStandIn() {
  const received: ReceivedMail[] = [];
  const listeners = new Set<() => void>();
  let failing = false;
  let release: Promise<void> = Promise.resolve();
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
      listeners.forEach((listener) => listener());
      void release.then(() => {
        res.setHeader("Content-Type", "application/json");
        if (failing) {
          res.statusCode = 500;
          res.end(JSON.stringify({ statusCode: 500, name: "application_error", message: "stand-in outage" }));
        } else {
          res.end(JSON.stringify({ id: `re_standin_${received.length}` }));
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    setFailing: (value: boolean) => void (failing = value),
    /** Holds every answer until the returned function is called. */
    hold(): () => void {
      let open!: () => void;
      release = new Promise<void>((resolve) => (open = resolve));
      return open;
    },
    /** Resolves once `count` mails have been received; rejects after `withinMs` without them. */
    receivedCount: (count: number, withinMs = 90_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`the Resend stand-in received ${received.length} of ${count} mails`));
        }, withinMs);
        const check = () => {
          if (received.length < count) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
