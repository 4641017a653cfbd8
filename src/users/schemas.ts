// A user's e-mail, password and name. The name is one a person reads: readableName() refuses control,
// format (bidi) and line-break characters in it (src/http/input-text.ts).
import { z } from "zod";
import { readableName } from "@/http/input-text";

export const ZEmail = z
  .string({ error: "must be a string" })
  .trim()
  .max(254, "must be at most 254 characters")
  .pipe(z.email({ error: "must be an e-mail address" }))
  .transform((email) => email.toLowerCase());

export const ZPassword = z
  .string({ error: "must be a string" })
  .min(8, "must be at least 8 characters")
  .max(256, "must be at most 256 characters");

export const ZName = readableName(100);
