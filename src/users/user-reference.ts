// A user named in a request body: URI (`/api/user/3/`), e-mail or id
// (docs/rules/specification.md#permission-request-record).
import { z } from "zod";
import { idFromReference } from "@/http/references";
import { db } from "@/db/client";
import { ZEmail } from "@/users/schemas";

export type UserReference = { id: number } | { email: string };

export const USER_REFERENCE_MESSAGE = "must be a user URI (/api/user/<id>/), e-mail or id";

export function parseUserReference(value: unknown): UserReference | null {
  if (typeof value === "string" && value.includes("@")) {
    const email = ZEmail.safeParse(value);
    return email.success ? { email: email.data } : null;
  }
  const id = idFromReference(value, "/api/user/");
  return id === null ? null : { id };
}

/** zod: a required user reference, parsed; a malformed one is "<field>: must be a user URI, e-mail or id". */
export const ZUserReference = z.unknown().optional().transform((value, ctx): UserReference => {
  const ref = parseUserReference(value); // null for a missing one too (undefined, null, "")
  if (ref === null) {
    const missing = value === undefined || value === null || value === "";
    ctx.addIssue({ code: "custom", message: missing ? "is required" : USER_REFERENCE_MESSAGE });
    return z.NEVER;
  }
  return ref;
});

/** The user a reference names, or null. */
export async function findUserByReference(ref: UserReference) {
  const client = await db();
  return "id" in ref ? client.user.findUnique({ where: { id: ref.id } }) : client.user.findUnique({ where: { email: ref.email } });
}
