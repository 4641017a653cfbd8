// The periodic outbox sweep each server process runs (started by instrumentation.ts when Next starts, in
// `npm run dev` and in every `npm start` worker). It delivers whatever is due: messages whose delivery right
// after the response failed or never ran (a crash, a provider outage), and scheduled retries. Runs never
// overlap within a process; across processes and workers the claim decides (src/email/deliver.ts), so any
// number of sweeps may run side by side. Graceful shutdown stops it and waits for a run in progress.
import { deliverDue, defaultTransport } from "@/email/deliver";
import { log } from "@/observability/log";

/** Often enough that a retry due 30 s after a failure goes out within a minute of it (src/email/deliver.ts). */
export const SWEEP_INTERVAL_MS = 15_000;

// On globalThis: once per process, also across dev-server reloads and across the two copies of this module
// that the custom server holds (its own, and Next's bundle's).
type Sweep = { interval: NodeJS.Timeout; first: NodeJS.Timeout; running: Promise<void> | null };
const holder = globalThis as typeof globalThis & { __mailSweep?: Sweep | "stopped" };

export function startMailSweep(): void {
  if (holder.__mailSweep) return;
  if (!defaultTransport()) {
    log.info("RESEND_API_KEY is not set: mail stays in the outbox (npm run cli -- mail:list)");
    return;
  }
  const sweep = () => {
    const state = holder.__mailSweep;
    if (typeof state !== "object" || state.running) return;
    state.running = deliverDue()
      .then(
        (result) => {
          if (result.sent || result.failed) log.info("mail sweep", { sent: result.sent, failed: result.failed });
        },
        (error: unknown) => log.warn("mail sweep failed", { error: String(error) }),
      )
      .finally(() => {
        state.running = null;
      });
  };
  log.info("mail sweep started", { everySeconds: SWEEP_INTERVAL_MS / 1000 });
  holder.__mailSweep = { interval: setInterval(sweep, SWEEP_INTERVAL_MS), first: setTimeout(sweep, 5_000), running: null };
  holder.__mailSweep.interval.unref();
  holder.__mailSweep.first.unref();
}

/** Stops the sweep for good (shutdown) and resolves once a run in progress has finished. */
export async function stopMailSweep(): Promise<void> {
  const state = holder.__mailSweep;
  holder.__mailSweep = "stopped";
  if (typeof state !== "object") return;
  clearInterval(state.interval);
  clearTimeout(state.first);
  await state.running;
}
