// Delivery right after a session ends (docs/rules/openid-connect.md#back-channel-logout): whoever ends a
// browser session announces the logout tokens its transaction queued, once committed; the delivery
// (src/logout/deliver-logout.ts, a floor above every caller) registers itself here when it loads, so that the
// layers stay one way. Nothing depends on it: the sweep and `logout:deliver` send whatever this misses.
// On globalThis: the custom server and Next's bundles each hold a copy of this module.
type Announce = (ids: number[]) => void;
const holder = globalThis as typeof globalThis & { __logoutQueued?: Announce };

/** Called by the delivery when it loads. */
export function deliverQueuedLogoutsWith(announce: Announce): void {
  holder.__logoutQueued = announce;
}

/** After the commit: the logout tokens `ids` are queued; deliver them soon if a delivery is loaded. */
export function logoutsQueued(ids: number[]): void {
  if (ids.length > 0) holder.__logoutQueued?.(ids);
}
