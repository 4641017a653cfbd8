import { write } from "@/server/db";

/** Ends every browser session of the user: sessions carry the version they were issued with. */
export async function signOutEverywhere(userId: number): Promise<void> {
  await write((tx) => tx.user.update({ where: { id: userId }, data: { sessionVersion: { increment: 1 } } }));
}
