// Delivery of logout tokens right after the response that queued them (docs/rules/openid-connect.md#back-channel-logout),
// through the project's after-response hook (src/http/after-response.ts), as mail is (src/email/deliver-soon.ts).
// Nothing can be lost: the tokens are already committed to the queue, and the sweep and `logout:deliver` pick
// up whatever this misses. Loading this module also lets every other way a session ends (next-auth's
// sign-out, sign out everywhere, a password reset: src/browser-sessions/logout-queued.ts) deliver soon.
// (Apart from src/logout/deliver-logout.ts, which the custom server's shutdown imports before Next is ready.)
import { afterResponse } from "@/http/after-response";
import { log } from "@/observability/log";
import { deliverQueuedLogoutsWith } from "@/browser-sessions/logout-queued";
import { deliverLogoutsDue } from "@/logout/deliver-logout";

export function deliverLogoutsSoon(ids: number[]): void {
  if (ids.length === 0) return;
  afterResponse(() =>
    deliverLogoutsDue({ ids }).then(
      () => undefined,
      (error: unknown) => log.warn("logout token delivery after response failed; the sweep will retry", { error: String(error) }),
    ),
  );
}

deliverQueuedLogoutsWith(deliverLogoutsSoon);
