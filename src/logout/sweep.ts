// The periodic sweep of queued logout tokens (docs/rules/openid-connect.md#back-channel-logout), in each server
// process as the mail sweep is (src/email/sweep.ts): started by instrumentation.ts, stopped and awaited at
// shutdown. Runs never overlap within a process; across processes the claim decides (src/logout/deliver-logout.ts).
import { deliverLogoutsDue } from "@/logout/deliver-logout";
import { log } from "@/observability/log";

/** A retry due 30 s after a failure goes out within a minute of it. */
export const LOGOUT_SWEEP_INTERVAL_MS = 15_000;

type Sweep = { interval: NodeJS.Timeout; running: Promise<void> | null };
const holder = globalThis as typeof globalThis & { __logoutSweep?: Sweep | "stopped" };

export function startLogoutSweep(): void {
  if (holder.__logoutSweep) return;
  const sweep = () => {
    const state = holder.__logoutSweep;
    if (typeof state !== "object" || state.running) return;
    state.running = deliverLogoutsDue()
      .then(
        (result) => {
          if (result.sent || result.failed) log.info("logout sweep", { sent: result.sent, failed: result.failed });
        },
        (error: unknown) => log.warn("logout sweep failed", { error: String(error) }),
      )
      .finally(() => {
        state.running = null;
      });
  };
  holder.__logoutSweep = { interval: setInterval(sweep, LOGOUT_SWEEP_INTERVAL_MS), running: null };
  holder.__logoutSweep.interval.unref();
}

/** Stops the sweep for good (shutdown) and resolves once a run in progress has finished. */
export async function stopLogoutSweep(): Promise<void> {
  const state = holder.__logoutSweep;
  holder.__logoutSweep = "stopped";
  if (typeof state !== "object") return;
  clearInterval(state.interval);
  await state.running;
}
