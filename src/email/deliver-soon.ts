// Delivery right after a response (CONTRACT.md 6). Inside a Next.js request, `after()` runs it once the
// response has been sent. Outside Next's request scope (tests, the CLI, a thin dispatcher) `after()` throws;
// then it runs at once in the background. Either way nothing can be lost: the message is already committed to
// the outbox, and the periodic sweep (instrumentation.ts) and `mail:deliver` pick up whatever this misses.
import { after } from "next/server";
import { deliverDue, defaultTransport } from "@/email/deliver";
import { log } from "@/server/log";

export function deliverSoon(ids: number[]): void {
  if (ids.length === 0 || !defaultTransport()) return; // no provider: the mail stays in the outbox
  const task = () =>
    deliverDue({ ids }).then(
      () => undefined,
      (error: unknown) => log.warn("mail delivery after response failed; the sweep will retry", { error: String(error) }),
    );
  try {
    after(task);
  } catch {
    void task();
  }
}
