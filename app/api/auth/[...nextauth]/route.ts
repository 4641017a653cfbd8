// next-auth's own routes (sign-in callback, CSRF token, sign-out); a browser endpoint
// (docs/rules/endpoints.md#json-only). A refused credentials sign-in gets the status of its reason
// (src/auth/sign-in-status.ts): 503 busy, 429 limited with Retry-After.
import NextAuth from "next-auth";
import { authOptions } from "@/auth/options";
import { answerSignIn } from "@/auth/sign-in-status";

type Context = { params: Promise<{ nextauth: string[] }> };

async function handler(request: Request, context: Context) {
  return answerSignIn(request, async () => (await NextAuth(request as never, context as never, authOptions())) as Response);
}

export { handler as GET, handler as POST };
