// Next.js calls register() once when a server instance starts. In the Node.js runtime it starts the outbox
// sweep (src/email/sweep.ts). NEXT_RUNTIME is Next's own build-time switch, not configuration: every setting
// is read in src/env.ts.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startMailSweep } = await import("./src/email/sweep");
    startMailSweep();
  }
}
