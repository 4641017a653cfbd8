// Connection deadlines and the connection cap (docs/rules/operations.md#connections) on a real socket: the
// production request listener and connection rules (src/server/front.ts) with shorter deadlines than
// production's, both on a server that listens itself (one process) and on one that is handed its connections,
// as each WORKERS worker is by the primary (src/server/workers.ts). What is asserted is the answer and the
// close, never how long they took.
import { afterEach, describe, expect, it } from "vitest";
import { startServer } from "@/testing/app";
import { openRaw, type RawConnection } from "@/testing/raw-socket";

// Deadlines a test can wait for: headers 300 ms, whole request 1 s, idle keep-alive 1.2 s, checked every 50 ms.
const SHORT = { headersTimeout: 300, requestTimeout: 1_000, keepAlive: 1_200, checkEvery: 50 };
const MODES = [["listening itself", false] as const, ["handed its connections, as a WORKERS worker", true] as const];

const HEALTH = "GET /api/health HTTP/1.1\r\nHost: localhost:3000\r\n\r\n";
const HEALTHY = /\r\n\r\n\{"status":"ok"\}$/;

let stops: Array<() => Promise<void>> = [];
const opened: RawConnection[] = [];
afterEach(async () => {
  for (const connection of opened.splice(0)) connection.destroy();
  await Promise.all(stops.map((stop) => stop()));
  stops = [];
});

async function server(options: Parameters<typeof startServer>[0]) {
  const started = await startServer(options);
  stops.push(started.close);
  return started;
}
async function open(url: string) {
  const connection = await openRaw(url);
  opened.push(connection);
  return connection;
}

describe.each(MODES)("deadlines, on a server %s", (_mode, handOver) => {
  it("answers a body sent a byte at a time past the request deadline with 408, and closes the connection", async () => {
    const { url } = await server({ limits: SHORT, handOver });
    const connection = await open(url);
    connection.write("POST /api/bundle/ HTTP/1.1\r\nHost: localhost:3000\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n");
    const body = connection.trickle(`{"name":"${"x".repeat(989)}"}`, 50);
    await connection.whenClosed();
    expect(connection.text()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(connection.text()).toMatch(/\r\nConnection: close\r\n/i);
    expect(body.sent()).toBeLessThan(1000); // the body was still on its way
  });

  it("does the same for a request that follows another on a kept-alive connection", async () => {
    const { url } = await server({ limits: SHORT, handOver });
    const connection = await open(url);
    connection.write(HEALTH);
    await connection.whenWritten(HEALTHY);
    connection.write("POST /api/bundle/ HTTP/1.1\r\nHost: localhost:3000\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n");
    connection.trickle(`{"name":"${"x".repeat(989)}"}`, 50);
    await connection.whenClosed();
    expect(connection.text()).toMatch(/\{"status":"ok"\}HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it("answers headers sent a byte at a time past the header deadline with 408, and closes the connection", async () => {
    const { url } = await server({ limits: SHORT, handOver });
    const connection = await open(url);
    const head = connection.trickle(`GET /api/health HTTP/1.1\r\nHost: localhost:3000\r\nX-Slow: ${"a".repeat(2000)}\r\n\r\n`, 20);
    await connection.whenClosed();
    expect(connection.text()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(head.sent()).toBeLessThan(2000);
  });

  it("answers a connection that sends nothing with 408 at the header deadline, and closes it", async () => {
    const { url } = await server({ limits: SHORT, handOver });
    const connection = await open(url);
    await connection.whenClosed();
    expect(connection.text()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it("closes a kept-alive connection that stays idle after its answer", async () => {
    const { url } = await server({ limits: SHORT, handOver });
    const connection = await open(url);
    connection.write(HEALTH);
    await connection.whenWritten(HEALTHY);
    expect(connection.text()).toMatch(/\r\nConnection: keep-alive\r\n/i);
    await connection.whenClosed();
    expect(connection.text().match(/HTTP\/1\.1 /g)).toHaveLength(1); // closed without another answer
  });

  it("serves a request that arrives within the deadlines, body and all", async () => {
    const { url } = await server({ limits: SHORT, handOver });
    const connection = await open(url);
    connection.write(HEALTH + HEALTH.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"));
    await connection.whenClosed();
    expect(connection.text().match(/HTTP\/1\.1 200 OK\r\n/g)).toHaveLength(2);
  });
});

describe.each(MODES)("MAX_CONNECTIONS, on a server %s", (_mode, handOver) => {
  it("closes a connection over the cap at once, and goes on serving those under it", async () => {
    const { url } = await server({ limits: { maxConnections: 2 }, handOver });
    const first = await open(url);
    const second = await open(url);
    for (const connection of [first, second]) {
      connection.write(HEALTH);
      await connection.whenWritten(HEALTHY);
    }
    const over = await open(url);
    over.write(HEALTH);
    await over.whenClosed();
    expect(over.text()).toBe("");
    // The two under the cap are still served, over the same connections.
    for (const connection of [first, second]) {
      connection.write(HEALTH);
      await connection.whenWritten(/\{"status":"ok"\}HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"ok"\}$/);
    }
    // Once one of them has gone, a new connection is served (the server sees the close a moment after the
    // client does: a connection made in between is still over the cap, and the next one is tried).
    second.destroy();
    let served = false;
    for (let attempt = 0; attempt < 50 && !served; attempt++) {
      const next = await open(url);
      next.write(HEALTH);
      served = await next.whenWritten(HEALTHY).then(() => true, () => false);
      if (!served) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(served).toBe(true);
  });
});
