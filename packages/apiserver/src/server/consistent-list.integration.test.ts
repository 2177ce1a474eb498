/**
 * Consistent lists (no resourceVersion) over HTTPS, served by the watch cache (Kubernetes 1.31's
 * ConsistentListFromCache), on both stores: a list never misses a write acknowledged before it was sent, while
 * clients write the listed ConfigMaps and Secrets of another namespace (which move the store's revision without
 * events for the ConfigMaps' cache), and the lists are answered from memory.
 */
import { type Cacher } from '../storage/cacher/cacher';

import { configMap, freshNamespace, STORES, useServer } from './conformance/harness';

interface Write {
  rv: bigint;
  deleted: boolean;
}

describe.each(STORES)('consistent lists from the watch cache over HTTPS on %s', (store) => {
  const server = useServer(store);

  test('never miss a write acknowledged before they were sent, and come from memory', async () => {
    const t = server();
    const ns = await freshNamespace(t, 'consistent');
    const other = await freshNamespace(t, 'elsewhere');
    const cms = `/api/v1/namespaces/${ns}/configmaps`;
    const caches = (t.server as unknown as { caches: Cacher[] }).caches;
    const fromCache = (): number => caches.reduce((n, c) => n + c.consistentLists.fromCache, 0);
    const history = new Map<string, Write[]>();
    let stop = false;
    const failures: string[] = [];
    const expectStatus = (r: { status: number; text: string }, want: number, what: string): void => {
      if (r.status !== want) failures.push(`${what}: ${r.status} ${r.text.slice(0, 200)}`);
    };

    const writer = async (w: number): Promise<void> => {
      const names = [0, 1, 2].map((i) => `w${w}-${i}`);
      for (let round = 0; !stop && failures.length === 0; round++) {
        const name = names[round % names.length]!;
        const h = history.get(name) ?? [];
        history.set(name, h);
        // Each ConfigMap goes round: created, updated, deleted.
        const step = h.length % 3;
        if (step === 0) {
          const r = await t.request('POST', cms, { body: configMap(name, { round: `${round}` }) });
          expectStatus(r, 201, `create ${name}`);
          h.push({ rv: BigInt(r.json.metadata.resourceVersion), deleted: false });
        } else if (step === 1) {
          const cur = (await t.request('GET', `${cms}/${name}`)).json;
          const r = await t.request('PUT', `${cms}/${name}`, { body: { ...cur, data: { round: `${round}` } } });
          expectStatus(r, 200, `update ${name}`);
          h.push({ rv: BigInt(r.json.metadata.resourceVersion), deleted: false });
        } else {
          const r = await t.request('DELETE', `${cms}/${name}`);
          expectStatus(r, 200, `delete ${name}`);
          h.push({ rv: BigInt(r.json.metadata.resourceVersion), deleted: true });
        }
      }
    };
    const elsewhere = async (): Promise<void> => {
      for (let i = 0; !stop && failures.length === 0; i++) {
        const r = await t.request('POST', `/api/v1/namespaces/${other}/secrets`, {
          body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}` }, stringData: { a: 'b' } },
        });
        expectStatus(r, 201, 'create secret');
      }
    };
    const checks: { acked: Map<string, number>; items: Map<string, bigint> }[] = [];
    const lister = async (n: number): Promise<void> => {
      for (let i = 0; i < n && failures.length === 0; i++) {
        const acked = new Map([...history].map(([k, h]) => [k, h.length]));
        const r = await t.request('GET', cms);
        expectStatus(r, 200, 'list');
        const items = (r.json?.items ?? []) as { metadata: { name: string; resourceVersion: string } }[];
        checks.push({ acked, items: new Map(items.map((o) => [o.metadata.name, BigInt(o.metadata.resourceVersion)])) });
      }
    };

    const before = fromCache();
    const writers = [0, 1, 2].map(writer);
    const others = elsewhere();
    await Promise.all([lister(75), lister(75)]);
    stop = true;
    await Promise.all([...writers, others]);
    expect(failures).toEqual([]);

    const problems: string[] = [];
    for (const c of checks) {
      for (const [name, h] of history) {
        const n = c.acked.get(name) ?? 0;
        if (n === 0) continue;
        const seen = c.items.get(name);
        // The list may show the last write acknowledged before it, or any later one.
        const allowed = h.slice(n - 1);
        const ok =
          seen === undefined ? allowed.some((w) => w.deleted) : allowed.some((w) => !w.deleted && w.rv === seen);
        if (!ok) {
          const acked = h.slice(0, n).map((w) => `${w.deleted ? 'delete' : 'write'}@${w.rv}`);
          problems.push(`${name}: the list shows ${seen ?? 'nothing'}; acknowledged before it: ${acked.join(' ')}`);
        }
      }
    }
    expect(problems.slice(0, 10)).toEqual([]);
    expect(checks).toHaveLength(150);
    // Served from memory (the server's own consistent lists count too, so at least the test's).
    expect(fromCache() - before).toBeGreaterThanOrEqual(140);
    const metrics = await t.request('GET', '/metrics');
    const served =
      /^apiserver_watch_cache_consistent_read_total\{(?=[^}]*fallback="false")(?=[^}]*resource="configmaps")(?=[^}]*success="true")[^}]*\} (\d+)/m.exec(
        metrics.text,
      );
    expect(Number(served?.[1])).toBeGreaterThanOrEqual(140);
  }, 120_000);
});
