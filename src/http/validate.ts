// zod at every boundary: a failed parse becomes a 400 whose message names the offending field
// ("ttl: must be an integer from 60 to 2592000"), never a 422 or a private error shape.
import type { z } from "zod";
import { ApiError } from "@/http/errors";

export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join(".");
  const message = issue.message.replace(/^Invalid input: /, "");
  throw new ApiError(400, field ? `${field}: ${message}` : message);
}
