import { json } from "@/http/respond";
import { route } from "@/http/route";
import { checkDatabase } from "@/monitoring/ready";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({
  GET: async () => {
    await checkDatabase();
    return json({ status: "ok", database: "ok" }, 200, { "Cache-Control": "no-store" });
  },
});
