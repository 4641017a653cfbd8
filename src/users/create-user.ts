// Creates a user whose address counts as confirmed (docs/rules/accounts.md#sign-up-and-confirmation): the
// admin CLI's `user:create`, the development seed and the test factories, where whoever runs it vouches for
// the address. Self-service sign-up is src/accounts/sign-up.ts, which creates the user unconfirmed and mails a
// confirmation link.
import { z } from "zod";
import { now } from "@/clock";
import { conflict } from "@/http/errors";
import { parseInput } from "@/http/validate";
import { write } from "@/db/client";
import { hashPassword } from "@/users/passwords";
import { ZEmail, ZName, ZPassword } from "@/users/schemas";

export const ZCreateUser = z.object({
  email: ZEmail,
  password: ZPassword,
  name: ZName.optional(),
});
export type TCreateUser = z.input<typeof ZCreateUser>;

/** Creates a confirmed user; the e-mail is stored lower-case and must be unused (409 otherwise). */
export async function createUser(input: TCreateUser) {
  const { email, password, name } = parseInput(ZCreateUser, input);
  const passwordHash = await hashPassword(password);
  try {
    return await write((tx) =>
      tx.user.create({ data: { email, name: name ?? email.split("@")[0]!, passwordHash, emailVerifiedAt: now() } }),
    );
  } catch (error) {
    if ((error as { code?: string }).code === "P2002") throw conflict("email: already registered");
    throw error;
  }
}
