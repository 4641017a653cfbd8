// Without METRICS_TOKEN there is no metrics endpoint (docs/rules/operations.md#metrics): 404, as for any
// unknown /api path.
import { describe, expect, it } from "vitest";
import { call } from "@/testing/app";

describe("GET /api/metrics without METRICS_TOKEN", () => {
  it("is 404, with or without a token", async () => {
    const variants: Array<Record<string, string>> = [{}, { authorization: "Bearer anything-at-all-0123456789" }];
    for (const headers of variants) {
      const response = await call("GET", "/api/metrics", { headers });
      expect(response.status).toBe(404);
      expect(response.json).toEqual({ error: "no such endpoint" });
    }
  });
});
