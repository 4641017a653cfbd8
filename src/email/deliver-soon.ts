// Delivery right after a response (docs/rules/permission-requests.md#mail-and-the-outbox), through the
// project's after-response hook (src/http/after-response.ts: the fast lane's own queue, Next's after() under
// Next, else at once in the background). Nothing can be lost: the message is already committed to the outbox,
// and the periodic sweep (src/email/sweep.ts) and `mail:deliver` pick up whatever this misses.
import { afterResponse } from "@/http/after-response";
import { deliverDue, defaultTransport } from "@/email/deliver";
import { log } from "@/observability/log";

export function deliverSoon(ids: number[]): void {
  if (ids.length === 0 || !defaultTransport()) return; // no provider: the mail stays in the outbox
  afterResponse(() =>
    deliverDue({ ids }).then(
      () => undefined,
      (error: unknown) => log.warn("mail delivery after response failed; the sweep will retry", { error: String(error) }),
    ),
  );
}
