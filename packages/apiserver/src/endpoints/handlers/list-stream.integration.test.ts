/**
 * Large lists are streamed (issue 18): a list of thousands of objects is written as the connection takes it, from the
 * watch cache's per-object encodings (`resourceVersion=0`) or encoded item by item (from the store), never gathered
 * into one buffer first. The bytes must be what the whole-list encoders wrote — JSON, Table, Protobuf, with
 * selectors and pages — and a client that stops reading must not make the server buffer the rest of the list.
 * The server runs in this process (real HTTPS on SQLite), so that the buffered bytes of its responses can be read.
 */
import { ServerResponse } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';

import { type ApiObject, builtinScheme, ProtobufCodec } from '@platform/api';

import { startTestServer, type TestServer } from '../../testing/test-server';

const NS = 'list-stream';
const PATH = `/api/v1/namespaces/${NS}/configmaps`;
const COUNT = 1500;
/** About 6 KiB per object: a list of about 9 MB, far above the streaming threshold and any socket buffer. */
const PAYLOAD = 6 * 1024;
const MiB = 1024 * 1024;
const PROTOBUF = 'application/vnd.platform.protobuf';

function configMap(i: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${String(i).padStart(5, '0')}`, labels: { tier: i % 3 === 0 ? 'a' : 'b' } },
    data: { payload: `${i}:${'é"\n'.repeat(3)}${'x'.repeat(PAYLOAD)}` },
  };
}

/**
 * The most bytes any response whose URL contains `marker` held unsent in the server (`writableLength`: its own
 * buffer and its socket's), sampled after every write.
 */
const held = new Map<string, number>();
const { write: originalWrite, end: originalEnd } = ServerResponse.prototype;
function noteHeld(res: ServerResponse): void {
  const url = res.req?.url ?? '';
  const m = /[?&]marker=([a-z0-9-]+)/.exec(url);
  if (m) held.set(m[1]!, Math.max(held.get(m[1]!) ?? 0, res.writableLength));
}

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET read in full; with `pauseMs`, the reader stops for that long at the start and after every MiB it read. */
function get(t: TestServer, agent: Agent, path: string, accept?: string, pauseMs = 0): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${t.url}${path}`, { agent, headers: accept ? { accept } : {} }, (res) => {
      const chunks: Buffer[] = [];
      let sincePause = 0;
      const pause = (): void => {
        res.pause();
        setTimeout(() => res.resume(), pauseMs);
      };
      if (pauseMs > 0) pause();
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        sincePause += c.length;
        if (pauseMs > 0 && sincePause >= MiB) {
          sincePause = 0;
          pause();
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded test responses are read freely
function json(g: Got): any {
  expect(g.status).toBe(200);
  return JSON.parse(g.body.toString('utf8'));
}

/** The JSON body is exactly what JSON.stringify writes for what it holds (the whole-list encoder's output). */
function expectCanonicalJson(g: Got): void {
  const text = g.body.toString('utf8');
  expect(JSON.stringify(JSON.parse(text)) === text).toBe(true);
}

const names = (list: { items: { metadata: { name: string } }[] }): string[] => list.items.map((i) => i.metadata.name);
const allNames = Array.from({ length: COUNT }, (_, i) => `cm-${String(i).padStart(5, '0')}`);

describe('streamed lists', () => {
  let t: TestServer;
  let agent: Agent;
  const codec = new ProtobufCodec(builtinScheme());

  beforeAll(async () => {
    ServerResponse.prototype.write = function (this: ServerResponse, ...args: unknown[]) {
      const r = (originalWrite as (...a: unknown[]) => boolean).apply(this, args);
      noteHeld(this);
      return r;
    } as ServerResponse['write'];
    ServerResponse.prototype.end = function (this: ServerResponse, ...args: unknown[]) {
      const r = (originalEnd as (...a: unknown[]) => ServerResponse).apply(this, args);
      noteHeld(this);
      return r;
    } as ServerResponse['end'];
    t = await startTestServer();
    agent = new Agent({ keepAlive: true, maxSockets: 16, ca: t.ca });
    expect((await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).toBe(201);
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = next++; i < COUNT; i = next++) {
          const r = await t.request('POST', PATH, { body: configMap(i) });
          if (r.status !== 201) throw new Error(`create ${i}: ${r.status} ${r.text.slice(0, 200)}`);
        }
      }),
    );
  }, 180_000);

  afterAll(async () => {
    ServerResponse.prototype.write = originalWrite;
    ServerResponse.prototype.end = originalEnd;
    agent?.destroy();
    await t?.stop();
  });

  it('serves the JSON list from the cache and from the store as the whole-list encoder did', async () => {
    // Every object is in the watch cache once its resourceVersion is: wait for the last create to be there.
    const consistent = await get(t, agent, PATH);
    const fromStore = json(consistent);
    expect(names(fromStore)).toEqual(allNames);
    expectCanonicalJson(consistent);
    const rv = fromStore.metadata.resourceVersion as string;
    const cached = await get(t, agent, `${PATH}?resourceVersion=${rv}`);
    const fromCache = json(cached);
    expectCanonicalJson(cached);
    // Other resources' writes (leases) move the revision: the items are what must match.
    expect(fromCache.items).toEqual(fromStore.items);
    // From the cache every item's bytes are known up front: the length is sent (from the store it may be chunked).
    expect(Number(cached.headers['content-length'])).toBe(cached.body.length);
    const rv0 = json(await get(t, agent, `${PATH}?resourceVersion=0`));
    expect(names(rv0)).toEqual(allNames);
    expect(t.errors).toEqual([]);
  }, 120_000);

  it('serves Protobuf lists byte for byte as the codec encodes the same list', async () => {
    const list = json(await get(t, agent, PATH));
    const rv = list.metadata.resourceVersion as string;
    for (const path of [PATH, `${PATH}?resourceVersion=${rv}`]) {
      const pb = await get(t, agent, path, PROTOBUF);
      expect(pb.status).toBe(200);
      expect(pb.headers['content-type']).toBe(PROTOBUF);
      expect(Number(pb.headers['content-length'])).toBe(pb.body.length);
      const decoded = codec.decode(pb.body) as ApiObject & { items: unknown[] };
      expect(decoded.items).toHaveLength(COUNT);
      // The same items at the revision this list was read at (other resources' writes move it).
      expect(pb.body.equals(codec.encode({ ...list, metadata: decoded.metadata } as ApiObject))).toBe(true);
    }
  }, 120_000);

  it('serves Tables, selectors and pages as before', async () => {
    const table = await get(t, agent, `${PATH}?resourceVersion=0`, 'application/json;as=Table;v=v1;g=meta.platform');
    const tbl = json(table);
    expectCanonicalJson(table);
    expect(tbl.kind).toBe('Table');
    expect(tbl.rows.map((r: { cells: string[] }) => r.cells[0])).toEqual(allNames);
    const withObjects = json(
      await get(t, agent, `${PATH}?includeObject=Object`, 'application/json;as=Table;v=v1;g=meta.platform'),
    );
    expect(withObjects.rows[7].object.data).toEqual(configMap(7).data);

    const tierA = allNames.filter((_n, i) => i % 3 === 0);
    for (const q of ['labelSelector=tier%3Da', 'labelSelector=tier%3Da&resourceVersion=0']) {
      const sel = await get(t, agent, `${PATH}?${q}`);
      expectCanonicalJson(sel);
      expect(names(json(sel))).toEqual(tierA);
    }
    const field = json(await get(t, agent, `${PATH}?fieldSelector=metadata.name%21%3Dcm-00000&resourceVersion=0`));
    expect(names(field)).toEqual(allNames.slice(1));

    // Pages of 400 (each about 2.4 MB, so streamed too): continue tokens and remainingItemCount as before.
    const seen: string[] = [];
    let token = '';
    let pages = 0;
    do {
      const page = await get(t, agent, `${PATH}?limit=400${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      expectCanonicalJson(page);
      const p = json(page);
      seen.push(...names(p));
      pages++;
      token = p.metadata.continue ?? '';
      if (token) expect(p.metadata.remainingItemCount).toBe(COUNT - seen.length);
      else expect(p.metadata.remainingItemCount).toBeUndefined();
    } while (token);
    expect(pages).toBe(Math.ceil(COUNT / 400));
    expect(seen).toEqual(allNames);
    expect(t.errors).toEqual([]);
  }, 120_000);

  it('does not buffer the rest of the list for a client that stops reading, and the list arrives whole', async () => {
    const reference = json(await get(t, agent, PATH));
    const rv = reference.metadata.resourceVersion as string;
    const size = JSON.stringify(reference).length;
    expect(size).toBeGreaterThan(8 * MiB);
    for (const [marker, query, accept] of [
      ['slow-cache', `resourceVersion=${rv}`, undefined],
      ['slow-store', '', undefined],
      ['slow-protobuf', `resourceVersion=${rv}`, PROTOBUF],
    ] as const) {
      const slow = await get(t, agent, `${PATH}?marker=${marker}${query ? `&${query}` : ''}`, accept, 300);
      expect(slow.status).toBe(200);
      if (accept) expect((codec.decode(slow.body) as { items: unknown[] }).items).toHaveLength(COUNT);
      else expect(json(slow).items).toEqual(reference.items);
      // Whole, it would have been held at once (the full size); streamed, a few chunks at most.
      expect(held.get(marker)).toBeDefined();
      expect(held.get(marker)!).toBeLessThan(2 * MiB);
    }
    expect(t.errors).toEqual([]);
  }, 120_000);

  it('stops writing when the client goes away in the middle, and serves the next list', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = httpsRequest(`${t.url}${PATH}?resourceVersion=0`, { ca: t.ca }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
        res.on('error', () => {});
      });
      req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
      req.end();
    });
    expect(names(json(await get(t, agent, `${PATH}?resourceVersion=0`)))).toEqual(allNames);
    expect(t.errors).toEqual([]);
  }, 60_000);
});
