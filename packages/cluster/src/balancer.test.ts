import { createServer, get, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

import { type Balancer, startBalancer } from './balancer';

function serve(name: string): Promise<Server> {
  const s = createServer((_req, res) => res.end(name));
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

const portOf = (s: Server): number => (s.address() as AddressInfo).port;

function fetchText(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(text));
    }).on('error', reject);
  });
}

describe('the API servers balancer', () => {
  let a: Server;
  let b: Server;
  let balancer: Balancer;

  afterEach(async () => {
    await balancer?.close();
    for (const s of [a, b]) if (s?.listening) await new Promise((r) => s.close(r));
  });

  it('stays on the server that answers, and fails over to the next when it goes down', async () => {
    a = await serve('a');
    b = await serve('b');
    balancer = await startBalancer('127.0.0.1', [portOf(a), portOf(b)]);
    expect(await fetchText(balancer.port)).toBe('a');
    expect(await fetchText(balancer.port)).toBe('a');
    a.closeAllConnections();
    await new Promise((r) => a.close(r));
    expect(await fetchText(balancer.port)).toBe('b');
    // The server that answered last is tried first from then on.
    expect(await fetchText(balancer.port)).toBe('b');
  });

  it('resets the connection when no server accepts one', async () => {
    a = await serve('a');
    const port = portOf(a);
    await new Promise((r) => a.close(r));
    balancer = await startBalancer('127.0.0.1', [port]);
    await expect(fetchText(balancer.port)).rejects.toThrow();
  });
});
