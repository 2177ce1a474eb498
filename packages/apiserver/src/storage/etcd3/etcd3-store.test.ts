import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { isStorageError } from '../errors';
import { type StoreEvent } from '../interface';
import { freePort, generateTls, startEtcd, type EtcdCluster } from '../testing/etcd';

import { classifyEtcdError, Etcd3Store } from './etcd3-store';
import { GrpcCallError, GrpcStatus } from './kv-client';

const enc = new TextEncoder();
const dec = new TextDecoder();

describe('etcd3 store: connection failures', () => {
  test('an unreachable endpoint gives Unreachable or Timeout quickly, never a hang', async () => {
    const port = await freePort();
    const store = new Etcd3Store({
      endpoints: [`http://127.0.0.1:${port}`],
      requestTimeoutMs: 1000,
      dialTimeoutMs: 500,
    });
    try {
      const t = Date.now();
      const err = await store.create('/x', enc.encode('x')).catch((e: unknown) => e);
      expect(isStorageError(err) && ['Unreachable', 'Timeout'].includes(err.code)).toBe(true);
      expect(Date.now() - t).toBeLessThan(8000);
      const health = await store.check(500).catch((e: unknown) => e);
      expect(isStorageError(health) && ['Unreachable', 'Timeout'].includes(health.code)).toBe(true);
    } finally {
      await store.close();
    }
  }, 20000);

  test('failures are told apart: answers are final, unsent calls and unknown outcomes are retried elsewhere', () => {
    const failed = (code: number, details: string): GrpcCallError => new GrpcCallError(code, details);
    const { UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL } = GrpcStatus;
    expect(classifyEtcdError(failed(UNAVAILABLE, 'No connection established'))).toBe('notSent');
    expect(classifyEtcdError(failed(UNAVAILABLE, 'etcdserver: no leader'))).toBe('notSent');
    expect(classifyEtcdError(failed(UNAVAILABLE, 'etcdserver: leader changed'))).toBe('ambiguous');
    expect(classifyEtcdError(failed(DEADLINE_EXCEEDED, 'Deadline exceeded'))).toBe('ambiguous');
    expect(classifyEtcdError(failed(INTERNAL, 'cannot read the watch response'))).toBe('ambiguous');
    expect(classifyEtcdError(new Error('etcdserver: request timed out'))).toBe('ambiguous');
    expect(classifyEtcdError(failed(11, 'mvcc: required revision has been compacted'))).toBe('definite');
    expect(classifyEtcdError(new Error('etcdserver: request is too large'))).toBe('definite');
  });

  test('bad options are rejected with errors that name them', () => {
    expect(() => new Etcd3Store({ endpoints: [] })).toThrow(/at least one endpoint/);
    expect(() => new Etcd3Store({ endpoints: ['127.0.0.1:2379'] })).toThrow(/http\(s\):\/\/host:port/);
    expect(
      () => new Etcd3Store({ endpoints: ['https://127.0.0.1:1'], tls: { caFile: '/nonexistent/ca.crt' } }),
    ).toThrow(/cannot read etcd CA file/);
  });
});

describe('etcd3 store: mutual TLS', () => {
  let dir: string;
  let cluster: EtcdCluster;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcd-tls-'));
    const tls = generateTls(dir);
    cluster = await startEtcd({ tls });
  }, 60000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('works with the client certificate; is refused without one', async () => {
    const store = new Etcd3Store({
      endpoints: cluster.endpoints,
      tls: { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'client.crt'), keyFile: join(dir, 'client.key') },
    });
    try {
      const kv = await store.create('/tls/a', enc.encode('secret'));
      expect(dec.decode((await store.get('/tls/a'))!.value)).toBe('secret');
      const ac = new AbortController();
      const it = store.watch('/tls/', kv.modRevision - 1n, ac.signal)[Symbol.asyncIterator]();
      const first = await it.next();
      expect((first.value as StoreEvent).revision).toBe(kv.modRevision);
      ac.abort();
      await store.check(2000);
    } finally {
      await store.close();
    }
    const anonymous = new Etcd3Store({
      endpoints: cluster.endpoints,
      tls: { caFile: join(dir, 'ca.crt') },
      requestTimeoutMs: 2000,
    });
    try {
      const err = await anonymous.get('/tls/a').catch((e: unknown) => e);
      expect(isStorageError(err) && ['Unreachable', 'Timeout'].includes(err.code)).toBe(true);
    } finally {
      await anonymous.close();
    }
  }, 30000);
});

describe('etcd3 store: 3-member cluster', () => {
  let cluster: EtcdCluster;
  beforeAll(async () => {
    cluster = await startEtcd({ members: 3 });
  }, 60000);
  afterAll(async () => {
    await cluster?.stop();
  });

  test('killing a member during a stream of writes loses no acknowledged write, and the watch misses nothing', async () => {
    const store = new Etcd3Store({ endpoints: cluster.endpoints, requestTimeoutMs: 3000 });
    try {
      const start = await store.currentRevision();
      const ac = new AbortController();
      const watched = new Map<string, number>();
      const watching = (async () => {
        for await (const ev of store.watch('/failover/', start, ac.signal)) {
          if (ev.type === 'put') watched.set(ev.kv.key, (watched.get(ev.kv.key) ?? 0) + 1);
        }
      })();
      const acked = new Set<string>();
      let failed = 0;
      let killed = false;
      let ackedAfterKill = 0;
      const writer = async (w: number): Promise<void> => {
        for (let i = 0; i < 150; i++) {
          const key = `/failover/w${w}/${String(i).padStart(4, '0')}`;
          try {
            await store.create(key, enc.encode(key));
            acked.add(key);
            if (killed) ackedAfterKill++;
          } catch (e) {
            if (!isStorageError(e)) throw e;
            failed++; // not acknowledged: may or may not be stored
          }
          if (w === 0 && i === 40) {
            killed = true;
            await cluster.members[0]!.kill();
          }
        }
      };
      await Promise.all(Array.from({ length: 4 }, (_, w) => writer(w)));
      expect(ackedAfterKill).toBeGreaterThan(100);
      const stored = new Set((await store.list('/failover/')).kvs.map((kv) => kv.key));
      const missing = [...acked].filter((k) => !stored.has(k));
      expect(missing).toEqual([]);
      expect(acked.size + failed).toBe(600);
      // The watch delivered every stored key exactly once, across the failover.
      const deadline = Date.now() + 15000;
      while (watched.size < stored.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      ac.abort();
      await watching;
      expect([...stored].filter((k) => watched.get(k) !== 1)).toEqual([]);
    } finally {
      await store.close();
    }
  }, 120000);
});
