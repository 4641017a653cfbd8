import { z } from "zod";

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

export const ZName = z
  .string({ error: "must be a string" })
  .trim()
  .min(1, "must not be empty")
  .max(100, "must be at most 100 characters");
