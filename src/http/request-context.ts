// Per-request facts that deep domain code may need without threading them through every call: the client
// address (for the audit log) and the request id. Set by route() around every /api handler, in both the
// fast lane and Next (AsyncLocalStorage follows the request across awaits).
import { AsyncLocalStorage } from "node:async_hooks";

export type RequestContext = { ip: string | null; requestId?: string };

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function requestContext(): RequestContext | undefined {
  return storage.getStore();
}
