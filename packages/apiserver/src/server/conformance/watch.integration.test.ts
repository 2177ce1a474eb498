/**
 * Document 1, "Watch" and "Events": every change after the start version, in revision order (creates, updates and
 * deletes, across namespaces, concurrent writers), only what the label and field selectors match, the same stream
 * over a WebSocket and as length-prefixed Protobuf, and `timeoutSeconds` ending the stream cleanly. Runs on both
 * stores.
 */
import { request as httpsRequest } from 'node:https';

import { builtinScheme, protoType, ProtobufCodec, WatchEventSchema } from '@platform/api';
import { WebSocket } from 'ws';

import { type TestServer } from '../../testing/test-server';
import {
  configMap,
  describeEvents,
  freshNamespace,
  mustCreate,
  openWatch,
  STORES,
  useServer,
  type WatchEventJson,
} from './harness';

const MERGE = { 'content-type': 'application/merge-patch+json' };

/** The current resource version of a collection (a list's). */
async function currentRv(t: TestServer, path: string): Promise<string> {
  return (await t.request('GET', path)).json.metadata.resourceVersion;
}

describe.each(STORES)('watch on %s', (store) => {
  const server = useServer(store);

  it('answers 200 at once, before any event, and streams JSON', async () => {
    const t = server();
    const ns = await freshNamespace(t, 'quiet');
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const w = await openWatch(t, `${path}?watch=1&resourceVersion=${await currentRv(t, path)}`);
    try {
      expect([w.status, w.headers['content-type'], w.headers['transfer-encoding'], w.events]).toEqual([
        200,
        'application/json',
        'chunked',
        [],
      ]);
    } finally {
      w.close();
    }
  });

  it('sends creates, updates and deletes in revision order, each with its own resourceVersion', async () => {
    const t = server();
    const [a, b] = [await freshNamespace(t, 'order'), await freshNamespace(t, 'order')];
    const start = await currentRv(t, '/api/v1/configmaps');
    const all = await openWatch(t, `/api/v1/configmaps?watch=1&resourceVersion=${start}`);
    const onlyA = await openWatch(t, `/api/v1/namespaces/${a}/configmaps?watch=1&resourceVersion=${start}`);
    try {
      // Sequential writes first: the exact event sequence is known.
      const path = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
      const expected: string[] = [];
      const rvs: string[] = [];
      const record = (type: string, ns: string, name: string, rv: string) => {
        expected.push(`${type} ${ns}/${name}`);
        rvs.push(rv);
      };
      const x = await mustCreate(t, path(a), configMap('x'));
      record('ADDED', a, 'x', x.metadata.resourceVersion);
      const y = await mustCreate(t, path(b), configMap('y'));
      record('ADDED', b, 'y', y.metadata.resourceVersion);
      const x2 = await t.request('PATCH', `${path(a)}/x`, { body: { data: { a: '2' } }, headers: MERGE });
      record('MODIFIED', a, 'x', x2.json.metadata.resourceVersion);
      const yDel = await t.request('DELETE', `${path(b)}/y`);
      record('DELETED', b, 'y', yDel.json.metadata.resourceVersion);
      // Then concurrent writers in both namespaces: order is whatever the store decided, and the stream follows it.
      const concurrent = await Promise.all(
        Array.from({ length: 12 }, (_, i) => mustCreate(t, path(i % 2 ? a : b), configMap(`c${i}`))),
      );
      const events = await all.waitFor(expected.length + concurrent.length);
      const seen = events.map((e) => `${e.type} ${e.object.metadata.namespace as string}/${e.object.metadata.name}`);
      expect(seen.slice(0, expected.length)).toEqual(expected);
      const eventRvs = events.map((e) => BigInt(e.object.metadata.resourceVersion as string));
      expect(eventRvs.slice(0, rvs.length)).toEqual(rvs.map(BigInt));
      for (let i = 1; i < eventRvs.length; i++) expect(eventRvs[i]! > eventRvs[i - 1]!).toBe(true);
      const concurrentRvs = concurrent
        .map((c) => BigInt(c.metadata.resourceVersion as string))
        .sort((p, q) => (p < q ? -1 : p > q ? 1 : 0));
      expect(eventRvs.slice(rvs.length)).toEqual(concurrentRvs);
      // The deleted object carries its last state at the deletion's revision.
      expect(events[3]?.object).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'y', namespace: b } });

      // The namespaced watch saw only namespace a, in the same order.
      const inA = await onlyA.waitFor(2 + 6);
      expect(inA.every((e) => e.object.metadata.namespace === a)).toBe(true);
      expect(describeEvents(inA.slice(0, 2))).toEqual(['ADDED x', 'MODIFIED x']);
    } finally {
      all.close();
      onlyA.close();
    }
  });

  it('sends only what the label selector matches: ADDED when an object starts matching, DELETED when it stops', async () => {
    const t = server();
    const ns = await freshNamespace(t, 'labels');
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    await mustCreate(t, path, configMap('before', {}, { app: 'web' }));
    const w = await openWatch(t, `${path}?watch=1&labelSelector=app%3Dweb`);
    try {
      await mustCreate(t, path, configMap('other', {}, { app: 'db' }));
      await mustCreate(t, path, configMap('matching', {}, { app: 'web' }));
      await t.request('PATCH', `${path}/other`, { body: { metadata: { labels: { app: 'web' } } }, headers: MERGE });
      await t.request('PATCH', `${path}/matching`, { body: { metadata: { labels: { app: 'db' } } }, headers: MERGE });
      await t.request('PATCH', `${path}/other`, { body: { data: { b: '1' } }, headers: MERGE });
      const events = await w.waitFor(5);
      expect(describeEvents(events)).toEqual([
        'ADDED before',
        'ADDED matching',
        'ADDED other',
        'DELETED matching',
        'MODIFIED other',
      ]);
    } finally {
      w.close();
    }
  });

  it('sends only what the field selector matches', async () => {
    const t = server();
    const ns = await freshNamespace(t, 'fields');
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const start = await currentRv(t, path);
    const byName = await openWatch(t, `${path}?watch=1&resourceVersion=${start}&fieldSelector=metadata.name%3Dwanted`);
    const byNamespace = await openWatch(
      t,
      `/api/v1/configmaps?watch=1&resourceVersion=${start}&fieldSelector=metadata.namespace%3D${ns}`,
    );
    try {
      await mustCreate(t, path, configMap('unwanted'));
      await mustCreate(t, path, configMap('wanted'));
      await t.request('DELETE', `${path}/wanted`);
      expect(describeEvents(await byName.waitFor(2))).toEqual(['ADDED wanted', 'DELETED wanted']);
      expect(describeEvents(await byNamespace.waitFor(3))).toEqual([
        'ADDED unwanted',
        'ADDED wanted',
        'DELETED wanted',
      ]);
      const pods = await openWatch(t, `/api/v1/namespaces/${ns}/pods?watch=1&fieldSelector=spec.nodeName%3Dnode-a`);
      try {
        const pod = (name: string, nodeName: string) => ({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
        });
        await mustCreate(t, `/api/v1/namespaces/${ns}/pods`, pod('on-b', 'node-b'));
        await mustCreate(t, `/api/v1/namespaces/${ns}/pods`, pod('on-a', 'node-a'));
        expect(describeEvents(await pods.waitFor(1))).toEqual(['ADDED on-a']);
      } finally {
        pods.close();
      }
    } finally {
      byName.close();
      byNamespace.close();
    }
    const bad = await t.request('GET', `${path}?watch=1&fieldSelector=data.a%3D1`);
    expect([bad.status, bad.json?.reason]).toEqual([400, 'BadRequest']);
  });

  it('streams the same events over a WebSocket', async () => {
    const t = server();
    const ns = await freshNamespace(t, 'ws');
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    await mustCreate(t, path, configMap('first'));
    const events: WatchEventJson[] = [];
    const ws = new WebSocket(`${t.url.replace('https:', 'wss:')}${path}?watch=1`, { ca: t.ca });
    try {
      const got = (n: number) =>
        new Promise<void>((resolve, reject) => {
          const check = () => (events.length >= n ? resolve() : undefined);
          ws.on('message', (data: Buffer) => {
            events.push(JSON.parse(data.toString('utf8')) as WatchEventJson);
            check();
          });
          ws.on('error', reject);
          ws.on('close', () => (events.length >= n ? resolve() : reject(new Error('closed early'))));
        });
      const three = got(3);
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      await mustCreate(t, path, configMap('second'));
      await t.request('DELETE', `${path}/first`);
      await three;
      expect(describeEvents(events)).toEqual(['ADDED first', 'ADDED second', 'DELETED first']);
    } finally {
      ws.close();
    }
  });

  it('streams length-prefixed Protobuf WatchEvents for Accept: Protobuf', async () => {
    const t = server();
    const ns = await freshNamespace(t, 'pb');
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    await mustCreate(t, path, configMap('in-protobuf', { p: '1' }));
    const codec = new ProtobufCodec(builtinScheme());
    const frame = await new Promise<{ contentType: string; type: string; object: unknown }>((resolve, reject) => {
      const req = httpsRequest(
        `${t.url}${path}?watch=1`,
        { ca: t.ca, headers: { accept: 'application/vnd.platform.protobuf' } },
        (res) => {
          let buf = Buffer.alloc(0);
          res.on('data', (c: Buffer) => {
            buf = Buffer.concat([buf, c]);
            if (buf.length < 4 || buf.length < 4 + buf.readUInt32BE(0)) return;
            const msg = protoType(WatchEventSchema.$id as string).decode(buf.subarray(4, 4 + buf.readUInt32BE(0))) as {
              type?: string;
              object?: { raw?: Uint8Array };
            };
            req.destroy();
            resolve({
              contentType: res.headers['content-type'] ?? '',
              type: msg.type ?? '',
              object: codec.decode(msg.object?.raw ?? new Uint8Array()),
            });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(frame).toMatchObject({
      contentType: 'application/vnd.platform.protobuf;stream=watch',
      type: 'ADDED',
      object: { kind: 'ConfigMap', metadata: { name: 'in-protobuf' }, data: { p: '1' } },
    });
  });

  it('ends the stream cleanly after timeoutSeconds', async () => {
    const t = server();
    const ns = await freshNamespace(t, 'timeout');
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const w = await openWatch(t, `${path}?watch=1&timeoutSeconds=1&resourceVersion=${await currentRv(t, path)}`);
    await w.ended;
    expect([w.status, w.events]).toEqual([200, []]);
  });
});
