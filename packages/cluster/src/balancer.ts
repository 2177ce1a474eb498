/**
 * A client-side load balancer for the API servers of an HA cluster, as k3s runs one in each agent: a TCP port on
 * 127.0.0.1 whose connections go to the API server that answered last, or to the next one that accepts a connection
 * when it does not. TLS goes through untouched (the API servers' certificate names 127.0.0.1), so the client still
 * verifies the server and authenticates to it. A daemon whose client configuration points here keeps working when
 * one API server goes down: its broken connections and watches are opened again, on another server.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** How long one API server may take to accept a connection before the next is tried. */
const CONNECT_TIMEOUT_MS = 2000;

/** A running balancer. */
export interface Balancer {
  /** The port it listens on (127.0.0.1). */
  port: number;
  close(): Promise<void>;
}

/** Opens a connection to `host:port`; resolves with it once connected, or with nothing on failure. */
function dial(host: string, port: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const fail = (): void => {
      s.destroy();
      resolve(undefined);
    };
    s.setTimeout(CONNECT_TIMEOUT_MS, fail);
    s.once('error', fail);
    s.once('connect', () => {
      s.setTimeout(0);
      s.off('error', fail);
      resolve(s);
    });
  });
}

/** Starts a balancer on 127.0.0.1:`port` (0: any) over the API servers listening on `host` at the `backends` ports. */
export async function startBalancer(host: string, backends: readonly number[], port = 0): Promise<Balancer> {
  let current = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    void (async () => {
      for (let n = 0; n < backends.length && !client.destroyed; n++) {
        const i = (current + n) % backends.length;
        const upstream = await dial(host, backends[i]!);
        if (!upstream) continue;
        current = i;
        if (client.destroyed) {
          upstream.destroy();
          return;
        }
        open.add(upstream);
        upstream.once('close', () => {
          open.delete(upstream);
          client.destroy();
        });
        upstream.on('error', () => upstream.destroy());
        client.once('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        return;
      }
      // No API server accepts connections: the client sees a reset and retries, as it would against one server.
      client.destroy();
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
