// Polls a condition that another part of the process makes true (a queue filling, a slot taken), for tests
// that must act at that moment. No timing is asserted: it fails naming `what` only after a generous wait.

export async function until(done: () => boolean, what: () => string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (done()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`never happened: ${what()}`);
}
