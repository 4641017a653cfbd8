// route() inside the request context the fast lane makes (src/http/request-context.ts, src/server/fast-lane.ts):
// the handler sees the client address (read from the request when first asked for), and the work it queues
// with afterResponse() waits in the lane's queue until the response has been written (mail goes out after the
// request that wrote it: docs/rules/permission-requests.md#mail-and-the-outbox), rather than starting at once.
import { describe, expect, it } from "vitest";
import { afterResponse } from "@/http/after-response";
import { laneContext, requestContext, runAfterTasks, runWithRequestContext, type AfterTask } from "@/http/request-context";
import { route } from "@/http/route";

const context = { params: Promise.resolve({}) };

describe("route() in the fast lane's request context", () => {
  it("gives the client address, and queues after-response work on the lane's queue until the lane runs it", async () => {
    const ran: string[] = [];
    const handlers = route({
      POST: async () => {
        afterResponse(() => {
          ran.push("mail");
        });
        return Response.json({ ip: requestContext()?.ip ?? null });
      },
    });
    const after: AfterTask[] = [];
    const request = new Request("http://localhost:3000/api/thing", { method: "POST", headers: { "x-forwarded-for": "6.6.6.6, 203.0.113.9" } });
    const response = await runWithRequestContext(laneContext(request, after), () => handlers.POST(request, context));
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 200, body: { ip: "203.0.113.9" } });
    // Let anything started in the background run: nothing may have.
    await new Promise((resolve) => setImmediate(resolve));
    expect({ queued: after.length, ran }).toEqual({ queued: 1, ran: [] });
    await runAfterTasks(after);
    expect(ran).toEqual(["mail"]);
  });
});
