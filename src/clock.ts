// The one clock every rule reads (docs/rules/endpoints.md#clock). Tests move it forward with advanceClock()
// and put it back with resetClock(); nothing else in src/ calls Date.now() for a rule (eslint enforces this).

let offsetMs = 0;

export function nowMs(): number {
  return Date.now() + offsetMs;
}

export function now(): Date {
  return new Date(nowMs());
}

/** Test hook: advance the clock by `ms` (cumulative), or reset it with `resetClock()`. */
export function advanceClock(ms: number): void {
  offsetMs += ms;
}

export function resetClock(): void {
  offsetMs = 0;
}
