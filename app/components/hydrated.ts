"use client";

// Whether React has taken over the page. Controls that only work with JavaScript (buttons whose handlers run
// in the browser, forms submitted by fetch) are disabled until then, so that a click or a submit made while
// the page is still loading is not lost (or sent as a plain form post the server does not expect).
import { useSyncExternalStore } from "react";

const subscribe = () => () => {};

export function useHydrated(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
}
