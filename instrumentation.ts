// Next.js calls register() once when a server instance starts. In the Node.js runtime it starts the outbox
// sweep (src/email/sweep.ts) and the sweep of queued logout tokens (src/logout/sweep.ts), and makes the first id_token signing key if there is none yet (src/oidc/keys.ts;
// safe when several instances start at once), and measures how fast it hashes passwords, which bounds the
// hashing queue (src/users/passwords.ts). NEXT_RUNTIME is Next's own build-time switch, not
// configuration: every setting is read in src/env.ts.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startMailSweep } = await import("./src/email/sweep");
    startMailSweep();
    const { startLogoutSweep } = await import("./src/logout/sweep");
    startLogoutSweep();
    await import("./src/logout/deliver-soon");
    const { ensureSigningKeyAtStart } = await import("./src/oidc/keys");
    await ensureSigningKeyAtStart();
    const { measureHashingAtStart } = await import("./src/users/passwords");
    await measureHashingAtStart();
  }
}
