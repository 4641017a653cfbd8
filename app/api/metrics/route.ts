import "@/email/outbox-depth"; // the outbox's gauge reads the outbox when scraped
import { route } from "@/http/route";
import { metricsResponse } from "@/monitoring/metrics-endpoint";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ GET: metricsResponse });
