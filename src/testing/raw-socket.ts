// A raw HTTP/1.1 connection for tests of what only the wire shows (deadlines, closes, request targets): what
// the server wrote, and whether it closed the connection. Waits have a budget, so that a server that never
// answers fails the test with what it had written by then, instead of hanging it.
import { connect, type Socket } from "node:net";

export type RawConnection = {
  socket: Socket;
  /** Everything the server wrote so far. */
  text: () => string;
  closed: () => boolean;
  write: (data: string | Buffer) => void;
  /** Resolves once the server has closed the connection; rejects when `budgetMs` passes first. */
  whenClosed: (budgetMs?: number) => Promise<void>;
  /** Resolves once what the server wrote matches; rejects when it closes first or `budgetMs` passes. */
  whenWritten: (pattern: RegExp, budgetMs?: number) => Promise<void>;
  /** Writes `data` one character every `everyMs` until it is all sent or the connection closes. */
  trickle: (data: string, everyMs: number) => { sent: () => number };
  destroy: () => void;
};

const BUDGET_MS = 10_000;

export function openRaw(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = "";
    let closed = false;
    const waiters = new Set<() => void>();
    const changed = () => waiters.forEach((wake) => wake());
    socket.on("data", (data) => ((text += data.toString("latin1")), changed()));
    socket.on("error", () => {});
    socket.on("close", () => ((closed = true), changed()));
    const wait = (done: () => boolean, failure: () => string | null, budgetMs: number) =>
      new Promise<void>((resolveWait, rejectWait) => {
        const timer = setTimeout(() => (waiters.delete(check), rejectWait(new Error(`nothing after ${budgetMs} ms; the server wrote ${JSON.stringify(text)}, connection ${closed ? "closed" : "still open"}`))), budgetMs);
        const check = () => {
          if (done()) return clearTimeout(timer), waiters.delete(check), resolveWait();
          const problem = failure();
          if (problem) return clearTimeout(timer), waiters.delete(check), rejectWait(new Error(problem));
        };
        waiters.add(check);
        check();
      });
    const connection: RawConnection = {
      socket,
      text: () => text,
      closed: () => closed,
      write: (data) => void (closed || socket.write(data)),
      whenClosed: (budgetMs = BUDGET_MS) => wait(() => closed, () => null, budgetMs),
      whenWritten: (pattern, budgetMs = BUDGET_MS) =>
        wait(() => pattern.test(text), () => (closed ? `closed without ${pattern}; the server wrote ${JSON.stringify(text)}` : null), budgetMs),
      trickle: (data, everyMs) => {
        let sent = 0;
        const timer = setInterval(() => {
          if (closed || sent >= data.length) return clearInterval(timer);
          socket.write(data[sent++]!);
        }, everyMs);
        socket.once("close", () => clearInterval(timer));
        return { sent: () => sent };
      },
      destroy: () => socket.destroy(),
    };
    socket.once("connect", () => resolve(connection));
    socket.once("error", reject);
  });
}
