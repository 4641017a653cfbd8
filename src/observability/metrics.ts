// Metrics in the Prometheus text format (docs/rules/operations.md#metrics), with prom-client:
// - http_requests_total{route,method,status} and http_request_duration_seconds{route,method}: every request
//   the server answers. `route` is the route pattern of the fast lane's table (`/api/user/[id]`), never the
//   raw path, so that no token (`/api/oauth2token/<token>/`) reaches a label; everything Next serves (pages,
//   /_next, /api/auth) is `(next)`, and an /api path no route claims `(none)`;
// - oauth_tokens_issued_total{grant_type}: successful token responses, by grant (the implicit grant's tokens
//   from the authorization endpoint included);
// - mail_outbox_messages{status}: the outbox by status, read from the database when scraped;
//   mail_delivery_failures_total: failed attempts to hand a message to the provider;
// - database_errors_total{kind}: requests answered 503 because the database was busy or unavailable;
// - token_cache_hits_total: bearer reads answered from the validated-token cache (src/db/fast-sql.ts,
//   src/db/pg-token-cache.ts), counted as a plain number on the hot path and read when scraped;
//   page_cache_hits_total: collection pages answered from the collection-page cache (src/db/page-cache.ts),
//   the same way;
// - process_* and nodejs_*: prom-client's default metrics.
// With WORKERS=n the metrics cover every worker: the worker that serves GET /api/metrics asks the primary,
// which collects from each worker (prom-client's AggregatorRegistry; counters and histograms summed, the
// outbox gauge, a database read that every worker makes alike, taken once). One registry per process, on
// globalThis (the custom server's modules and Next's bundle share it).
import cluster from "node:cluster";
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

type Metrics = {
  registry: Registry;
  requests: Counter<"route" | "method" | "status">;
  duration: Histogram<"route" | "method">;
  tokensIssued: Counter<"grant_type">;
  outbox: Gauge<"status">;
  mailFailures: Counter;
  databaseErrors: Counter<"kind">;
};

type OutboxDepthReader = () => Promise<Record<string, number>>;

const holder = globalThis as typeof globalThis & {
  __appMetrics?: Metrics;
  __appTokenCacheHits?: { count: number };
  __appPageCacheHits?: { count: number };
  __appClientCacheHits?: { count: number };
  __appOutboxDepth?: OutboxDepthReader;
};

/** The outbox gives the gauge its reader (src/email/outbox-depth.ts): this layer imports nothing above it. */
export function measureOutboxDepth(read: OutboxDepthReader): void {
  holder.__appOutboxDepth = read;
}

/** Bearer reads answered from the token cache: `tokenCacheHits.count++` costs the hot path nothing more. */
export const tokenCacheHits: { count: number } = (holder.__appTokenCacheHits ??= { count: 0 });
/** Client look-ups answered from the token cache's client rows (PostgreSQL), counted the same way. */
export const clientCacheHits: { count: number } = (holder.__appClientCacheHits ??= { count: 0 });
/** Collection pages answered from the page cache, counted the same way. */
export const pageCacheHits: { count: number } = (holder.__appPageCacheHits ??= { count: 0 });

function create(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics: Metrics = {
    registry,
    requests: new Counter({ name: "http_requests_total", help: "HTTP requests answered, by route pattern, method and status", labelNames: ["route", "method", "status"], registers: [registry] }),
    duration: new Histogram({
      name: "http_request_duration_seconds",
      help: "Time from request to response written, by route pattern and method",
      labelNames: ["route", "method"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    tokensIssued: new Counter({ name: "oauth_tokens_issued_total", help: "Access tokens issued, by grant type", labelNames: ["grant_type"], registers: [registry] }),
    outbox: new Gauge({
      name: "mail_outbox_messages",
      help: "Messages in the mail outbox, by status (read from the database when scraped)",
      labelNames: ["status"],
      registers: [registry],
      aggregator: "max", // every worker reads the same table: not a sum
      async collect() {
        try {
          const read = holder.__appOutboxDepth;
          if (!read) return;
          const counts = await read();
          for (const status of ["pending", "sending", "sent", "failed"]) this.set({ status }, counts[status] ?? 0);
        } catch {
          // The database cannot answer: the gauge keeps its last values; database_errors_total tells.
        }
      },
    }),
    mailFailures: new Counter({ name: "mail_delivery_failures_total", help: "Failed attempts to hand a message to the mail provider", registers: [registry] }),
    databaseErrors: new Counter({ name: "database_errors_total", help: "Requests answered 503 because the database was busy or could not be reached", labelNames: ["kind"], registers: [registry] }),
  };
  new Counter({
    name: "token_cache_hits_total",
    help: "Bearer reads answered from the validated-token cache",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(tokenCacheHits.count);
    },
  });
  new Counter({
    name: "client_cache_hits_total",
    help: "Client look-ups answered from the cache of client rows (PostgreSQL)",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(clientCacheHits.count);
    },
  });
  new Counter({
    name: "page_cache_hits_total",
    help: "Collection pages answered from the collection-page cache",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(pageCacheHits.count);
    },
  });
  if (cluster.isWorker) {
    // Answer the primary's collection requests (prom-client's listener is added when an aggregator exists).
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([registry]);
  }
  return metrics;
}

export function metrics(): Metrics {
  holder.__appMetrics ??= create();
  return holder.__appMetrics;
}

export function observeRequest(route: string, method: string, status: number, seconds: number): void {
  const m = metrics();
  m.requests.inc({ route, method, status: String(status) });
  m.duration.observe({ route, method }, seconds);
}

export function countTokenIssued(grantType: string): void {
  metrics().tokensIssued.inc({ grant_type: grantType });
}

export function countMailFailure(): void {
  metrics().mailFailures.inc();
}

export function countDatabaseError(kind: "busy" | "unavailable"): void {
  metrics().databaseErrors.inc({ kind });
}

// --- WORKERS: the primary collects from every worker ------------------------------------------------------

export type MetricsMessage = { type: "metrics:request"; id: number } | { type: "metrics:response"; id: number; text?: string; error?: string };

/** In the primary: answers a worker's request for every worker's metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on("message", (worker, message: MetricsMessage) => {
    if (message?.type !== "metrics:request") return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: "metrics:response", id: message.id, text } satisfies MetricsMessage),
      (error: unknown) => worker.send({ type: "metrics:response", id: message.id, error: String(error) } satisfies MetricsMessage),
    );
  });
}

let nextId = 0;
const waiting = new Map<number, (answer: MetricsMessage) => void>();
let listening = false;

function askPrimary(): Promise<string> {
  if (!listening) {
    listening = true;
    process.on("message", (message: MetricsMessage) => {
      if (message?.type !== "metrics:response") return;
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    });
  }
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error("the primary did not answer with the workers' metrics"));
    }, 6_000);
    waiting.set(id, (answer) => {
      clearTimeout(timer);
      if (answer.type === "metrics:response" && answer.text !== undefined) resolve(answer.text);
      else reject(new Error(answer.type === "metrics:response" ? (answer.error ?? "no metrics") : "no metrics"));
    });
    process.send!({ type: "metrics:request", id } satisfies MetricsMessage);
  });
}

/** The exposition text: this process's metrics, or with WORKERS every worker's, aggregated. */
export async function exposition(): Promise<{ contentType: string; text: string }> {
  const { registry } = metrics();
  const text = cluster.isWorker && process.send ? await askPrimary() : await registry.metrics();
  return { contentType: registry.contentType, text };
}
