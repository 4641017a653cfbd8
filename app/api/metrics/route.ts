import { route } from "@/http/route";
import { metricsResponse } from "@/server/metrics-endpoint";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ GET: metricsResponse });
