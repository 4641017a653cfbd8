// The part of autocannon 8's API that scripts/bench.ts uses (the package ships no types, and
// @types/autocannon is not installed). Shapes follow node_modules/autocannon/README.md.
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  /** One request of a client's loop. `setupRequest` may rewrite it before each send. */
  export type Request = {
    method?: "GET" | "POST" | "PUT" | "DELETE" | "PATCH" | "OPTIONS" | "HEAD";
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request | null | undefined | false;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
  };

  /** One connection; passed to `setupClient` once, when the connection is created. */
  export type Client = EventEmitter & {
    setRequests(requests: Request[]): void;
  };

  export type Options = {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds before a request counts as timed out (default 10). */
    timeout?: number;
    title?: string;
    requests?: Request[];
    setupClient?: (client: Client) => void;
  };

  /** hdr-histogram-percentiles-obj: latency in milliseconds, requests in requests per second. */
  export type Histogram = {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p2_5: number;
    p50: number;
    p75: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
  };

  export type Result = {
    title?: string;
    url: string;
    connections: number;
    duration: number;
    requests: Histogram & { sent: number };
    latency: Histogram & { totalCount: number };
    throughput: Histogram;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    statusCodeStats: Record<string, { count: number }>;
  };

  /** Without a callback the instance is also a promise of the results. */
  export type Instance = EventEmitter & Promise<Result> & { stop(): void };

  export default function autocannon(options: Options): Instance;
}
