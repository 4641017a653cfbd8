import { redirect } from "next/navigation";
import { currentUser, type SessionUser } from "@/auth/session";

/** The signed-in user, or a redirect to sign-in that comes back to `path`. */
export async function requireUser(path: string): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect(`/login?callbackUrl=${encodeURIComponent(path)}`);
  return user;
}
