// Work to run once the response has been sent: mail delivery right after the request that wrote it
// (docs/rules/permission-requests.md#mail-and-the-outbox). Next's after() only works inside Next's own request
// scope, which the fast lane of the custom server (src/server/fast-lane.ts) bypasses; so the project has its
// own hook:
// - on the fast lane (`npm start`, and the integration tests' dispatcher), the request context holds a queue
//   that the lane runs once the response has been written to the socket;
// - under Next (`npm run dev`, and anything the custom server passes on to Next), Next's after() runs it;
// - anywhere else (the CLI, a script) it starts at once, in the background.
// A task must not throw into the caller: failures are logged here and are the task's own to retry.
import { after } from "next/server";
import { requestContext, type AfterTask } from "@/http/request-context";
import { log } from "@/observability/log";

const guarded = (task: AfterTask) => () =>
  Promise.resolve()
    .then(task)
    .catch((error: unknown) => log.warn("after-response task failed", { error: String(error) }));

export function afterResponse(task: AfterTask): void {
  const queue = requestContext()?.after;
  if (queue) {
    queue.push(guarded(task));
    return;
  }
  try {
    after(guarded(task));
  } catch {
    void guarded(task)();
  }
}
