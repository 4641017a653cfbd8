// A bundle's name is one a person reads: readableName() refuses control, format (bidi) and line-break
// characters in it (src/http/input-text.ts).
import { z } from "zod";
import { now } from "@/clock";
import { readableName } from "@/http/input-text";
import { parseInput } from "@/http/validate";
import { write } from "@/db/client";
import { representBundle } from "@/bundles/represent";

export const ZCreateBundle = z.object({
  ownerId: z.number().int().positive(),
  name: readableName(200),
});
export type TCreateBundle = z.input<typeof ZCreateBundle>;

export async function createBundle(input: TCreateBundle) {
  const data = parseInput(ZCreateBundle, input);
  const bundle = await write((tx) =>
    tx.bundle.create({ data: { name: data.name, ownerId: data.ownerId, createdAt: now() }, include: { owner: true } }),
  );
  return representBundle(bundle, data.ownerId);
}
