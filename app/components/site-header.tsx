import { currentUser } from "@/auth/session";
import { HeaderNav } from "./header-nav";

export async function SiteHeader() {
  const user = await currentUser();
  return <HeaderNav email={user?.email ?? null} />;
}
