// A TCP proxy between the app and its PostgreSQL server, for outage tests: it forwards, refuses (nothing
// listens on the port: connection refused), holds connections without answering (a network that drops
// packets: only a timeout ends the wait), or accepts and closes at once (a server that drops connections).
// Changing the mode ends the connections it carried, as a database stopping does.
import { connect, createServer, type Server, type Socket } from "node:net";

export type ProxyMode = "forward" | "refuse" | "blackhole" | "drop";

export type TcpProxy = { port: number; mode: () => ProxyMode; setMode: (mode: ProxyMode) => Promise<void>; close: () => Promise<void> };

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = "forward";
  const sockets = new Set<Socket>();
  const keep = (socket: Socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.once("close", () => sockets.delete(socket));
  };
  const onConnection = (client: Socket) => {
    keep(client);
    if (mode === "drop") return void client.destroy();
    if (mode === "blackhole") return; // accepted, never answered
    const upstream = connect(target.port, target.host);
    keep(upstream);
    client.pipe(upstream).pipe(client);
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  };
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer(onConnection);
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const stopListening = () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await listen();
  return {
    port,
    mode: () => mode,
    async setMode(next) {
      for (const socket of sockets) socket.destroy();
      if (next === "refuse" && mode !== "refuse") {
        await stopListening();
        server = null;
      } else if (next !== "refuse" && mode === "refuse") {
        await listen();
      }
      mode = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await stopListening();
    },
  };
}
