import { z } from "zod";
import { now } from "@/clock";
import { parseInput } from "@/http/validate";
import { write } from "@/server/db";
import { representBundle } from "@/bundles/represent";

export const ZCreateBundle = z.object({
  ownerId: z.number().int().positive(),
  name: z.string({ error: "must be a string" }).trim().min(1, "must not be empty").max(200, "must be at most 200 characters"),
});
export type TCreateBundle = z.input<typeof ZCreateBundle>;

export async function createBundle(input: TCreateBundle) {
  const data = parseInput(ZCreateBundle, input);
  const bundle = await write((tx) =>
    tx.bundle.create({ data: { name: data.name, ownerId: data.ownerId, createdAt: now() }, include: { owner: true } }),
  );
  return representBundle(bundle, data.ownerId);
}
