// The one clock every rule reads (CONTRACT.md 1). Tests move it with setClock(); nothing else in src/ calls
// Date.now() for a rule (eslint enforces this).

let offsetMs = 0;
let fixedMs: number | null = null;

export function nowMs(): number {
  return fixedMs ?? Date.now() + offsetMs;
}

export function now(): Date {
  return new Date(nowMs());
}

/** Test hook: advance the clock by `ms` (cumulative), or reset it with `resetClock()`. */
export function advanceClock(ms: number): void {
  if (fixedMs !== null) fixedMs += ms;
  else offsetMs += ms;
}

export function resetClock(): void {
  offsetMs = 0;
  fixedMs = null;
}
