// The periodic outbox sweep each server instance runs (started by instrumentation.ts). It delivers whatever
// is due: messages whose delivery right after the response failed or never ran (a crash, a provider outage),
// and scheduled retries. Runs never overlap within a process; across processes the claim decides.
import { deliverDue, defaultTransport } from "@/email/deliver";
import { log } from "@/server/log";

export const SWEEP_INTERVAL_MS = 60_000;

const holder = globalThis as typeof globalThis & { __mailSweep?: NodeJS.Timeout };

export function startMailSweep(): void {
  if (holder.__mailSweep) return; // once per process, also across dev-server reloads
  if (!defaultTransport()) {
    log.info("RESEND_API_KEY is not set: mail stays in the outbox (npm run cli -- mail:list)");
    return;
  }
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const result = await deliverDue();
      if (result.sent || result.failed) log.info("mail sweep", { sent: result.sent, failed: result.failed });
    } catch (error) {
      log.warn("mail sweep failed", { error: String(error) });
    } finally {
      running = false;
    }
  };
  log.info("mail sweep started", { everySeconds: SWEEP_INTERVAL_MS / 1000 });
  holder.__mailSweep = setInterval(sweep, SWEEP_INTERVAL_MS);
  holder.__mailSweep.unref();
  setTimeout(sweep, 5_000).unref();
}
