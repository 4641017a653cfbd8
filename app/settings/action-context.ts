// Server actions run outside route(), which sets the request context of /api handlers: this gives domain
// code called from an action the client address for the audit log (docs/rules/endpoints.md#client-address,
// docs/rules/operations.md#audit-log).
import { actionClientAddress } from "@/http/action-address";
import { runWithRequestContext } from "@/http/request-context";

export async function inActionContext<T>(fn: () => Promise<T>): Promise<T> {
  return runWithRequestContext({ ip: await actionClientAddress() }, fn);
}
