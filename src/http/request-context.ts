// Per-request facts that deep domain code may need without threading them through every call: the client
// address (for the audit log), the request id, and work to run once the response has been sent. Set by
// route() around every /api handler and by the fast lane (src/server/fast-lane.ts) around every request it
// serves (AsyncLocalStorage follows the request across awaits).
//
// One store per process, on globalThis: the custom server imports the route modules beside Next's own bundle
// (two copies of this module in one process), and both must see the same context.
import { AsyncLocalStorage } from "node:async_hooks";
import { clientAddress } from "@/http/client-address";

export type AfterTask = () => unknown;

export type RequestContext = {
  /**
   * The client address (docs/rules/endpoints.md#client-address); in the fast lane read from the request when
   * first asked for.
   */
  readonly ip: string | null;
  requestId?: string;
  /** Set by the fast lane: tasks it runs once the response has been written (see afterResponse()). */
  after?: AfterTask[];
};

const holder = globalThis as typeof globalThis & { __appRequestContext?: AsyncLocalStorage<RequestContext> };
const storage: AsyncLocalStorage<RequestContext> = (holder.__appRequestContext ??= new AsyncLocalStorage<RequestContext>());

/**
 * The context the fast lane (and the integration tests' dispatcher) makes for a request, with its
 * after-response queue; the client address is read from the request when something first asks for it (a
 * rate limit, an audit event), so that the many requests that never ask do not pay for it.
 */
export function laneContext(request: Request, after: AfterTask[]): RequestContext {
  return new LaneContext(request, after);
}

class LaneContext implements RequestContext {
  readonly #request: Request;
  #ip: string | undefined = undefined;
  constructor(
    request: Request,
    readonly after: AfterTask[],
  ) {
    this.#request = request;
  }
  get ip(): string {
    return (this.#ip ??= clientAddress(this.#request));
  }
}

export function runWithRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function requestContext(): RequestContext | undefined {
  return storage.getStore();
}

/** Runs the tasks a request queued (already guarded by afterResponse()), one after the other. */
export async function runAfterTasks(tasks: AfterTask[]): Promise<void> {
  for (const task of tasks) await task();
}
