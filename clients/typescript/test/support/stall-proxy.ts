// A TCP front for a joust server that can stop answering: what a stalled or overloaded service
// looks like to a client. A mode applies to the connections opened while it is set (a client's
// pooled keep-alive connection keeps the mode it was opened under), so tests that need several
// modes at once use one proxy each.

import { createConnection, createServer, type Socket } from "node:net";

export type ProxyMode =
  /** Pass bytes both ways to the real server. */
  | "forward"
  /** Accept the connection and the request, never answer. */
  | "hold"
  /** Send a 200's headers and part of its body, then nothing more. */
  | "stall-body"
  /** Answer 503 database_unavailable with Retry-After, as the service does in an outage. */
  | "unavailable";

export interface StallProxy {
  baseUrl: string;
  /** The mode of connections opened from now on. */
  setMode(mode: ProxyMode): void;
  close(): Promise<void>;
}

export async function startStallProxy(
  target: { port: number },
  mode: ProxyMode,
): Promise<StallProxy> {
  const sockets = new Set<Socket>();
  let currentMode = mode;
  const proxy: StallProxy = {
    baseUrl: "",
    setMode(mode) {
      currentMode = mode;
    },
    close: () => Promise.resolve(),
  };
  const server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => undefined);
    const mode = currentMode;
    if (mode === "forward") {
      const upstream = createConnection({ port: target.port, host: "127.0.0.1" });
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.on("error", () => client.destroy());
      client.pipe(upstream).pipe(client);
      return;
    }
    client.once("data", () => {
      if (mode === "stall-body") {
        client.write(
          'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"duel_',
        );
      } else if (mode === "unavailable") {
        const body =
          '{"error":{"code":"database_unavailable","message":"the database is unreachable"}}';
        client.end(
          `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      }
      // "hold": read and say nothing.
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  proxy.baseUrl = `http://127.0.0.1:${port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => {
        resolve();
      });
    });
  return proxy;
}
