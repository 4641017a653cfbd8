// A bundle named in a request body: URI (`/api/bundle/3/`) or id
// (docs/rules/specification.md#permission-request-record).
import { z } from "zod";
import { idFromReference } from "@/http/references";

export const BUNDLE_REFERENCE_MESSAGE = "must be a bundle URI (/api/bundle/<id>/) or id";

/** zod: a required bundle reference, as the bundle id. */
export const ZBundleReference = z.unknown().optional().transform((value, ctx): number => {
  const blank = value === undefined || value === null || value === "";
  const id = blank ? null : idFromReference(value, "/api/bundle/");
  if (id === null) {
    ctx.addIssue({ code: "custom", message: blank ? "is required" : BUNDLE_REFERENCE_MESSAGE });
    return z.NEVER;
  }
  return id;
});
