// The client address inside a server action or server component (docs/rules/endpoints.md#client-address): the
// rule of clientAddress() (src/http/client-address.ts), read from the headers Next gives the action.
import { env } from "@/env";
import { clientAddressFromForwarded } from "@/http/client-address";

export async function actionClientAddress(): Promise<string> {
  const { headers } = await import("next/headers");
  return clientAddressFromForwarded((await headers()).get("x-forwarded-for"), env().trustProxy);
}
