import {
  type ApiObject,
  ClusterRoleKind,
  type ConfigMap,
  ConfigMapKind,
  EventKind,
  isNotFound,
  NamespaceKind,
  type OwnerReference,
  SecretKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { garbageCollectorController } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;
const NS = 'gc';

beforeAll(async () => {
  h = await startControllerHarness();
  await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  await h.client.resource(NamespaceKind).create({ metadata: { name: 'other' } });
  h.start(garbageCollectorController);
});

afterAll(async () => {
  await h?.stop();
});

const cms = () => h.client.resource(ConfigMapKind, NS);

function refTo(owner: ApiObject, extra: Partial<OwnerReference> = {}): OwnerReference {
  return {
    apiVersion: owner.apiVersion ?? 'v1',
    kind: owner.kind ?? 'ConfigMap',
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    ...extra,
  };
}

async function owner(name: string): Promise<ConfigMap> {
  const o = await cms().create({ metadata: { name }, data: {} });
  return { ...o, apiVersion: 'v1', kind: 'ConfigMap' };
}

async function dependent(name: string, refs: OwnerReference[], finalizers?: string[]): Promise<ConfigMap> {
  return cms().create({ metadata: { name, ownerReferences: refs, ...(finalizers ? { finalizers } : {}) }, data: {} });
}

async function absent(get: () => Promise<unknown>): Promise<boolean> {
  try {
    await get();
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

test('background: the dependents of a deleted owner are deleted', async () => {
  const o = await owner('bg-owner');
  await dependent('bg-dep', [refTo(o)]);
  await h.client.resource(SecretKind, NS).create({ metadata: { name: 'bg-secret', ownerReferences: [refTo(o)] } });
  await cms().delete('bg-owner');
  await waitFor('the dependent configmap to go', () => absent(() => cms().get('bg-dep')));
  await waitFor('the dependent secret to go', () => absent(() => h.client.resource(SecretKind, NS).get('bg-secret')));
});

test('foreground: the owner stays until its blocking dependents are gone', async () => {
  const o = await owner('fg-owner');
  await dependent('fg-dep', [refTo(o, { blockOwnerDeletion: true })], ['example.platform/hold']);
  await dependent('fg-free', [refTo(o)]);
  await cms().delete('fg-owner', { propagationPolicy: 'Foreground' });
  await waitFor(
    'the blocking dependent to be deleting',
    async () => !!(await cms().get('fg-dep')).metadata?.deletionTimestamp,
  );
  await waitFor('the non-blocking dependent to go', () => absent(() => cms().get('fg-free')));
  // The owner waits for the blocking dependent, held by its finalizer.
  const held = await cms().get('fg-owner');
  expect(held.metadata?.finalizers).toContain('foregroundDeletion');
  expect(held.metadata?.deletionTimestamp).toBeTruthy();
  const dep = await cms().get('fg-dep');
  await cms().update({ ...dep, metadata: { ...dep.metadata, finalizers: [] } });
  await waitFor('the owner to go once the dependent has', () => absent(() => cms().get('fg-owner')));
});

test('foreground through a chain: grandchildren, then children, then the owner', async () => {
  const top = await owner('chain-top');
  const mid = await dependent('chain-mid', [refTo(top, { blockOwnerDeletion: true })]);
  await dependent(
    'chain-leaf',
    [refTo({ ...mid, apiVersion: 'v1', kind: 'ConfigMap' }, { blockOwnerDeletion: true })],
    ['example.platform/hold'],
  );
  await cms().delete('chain-top', { propagationPolicy: 'Foreground' });
  await waitFor('the middle object to be deleting in the foreground', async () => {
    const m = await cms().get('chain-mid');
    return !!m.metadata?.deletionTimestamp && !!m.metadata.finalizers?.includes('foregroundDeletion');
  });
  await waitFor('the leaf to be deleting', async () => !!(await cms().get('chain-leaf')).metadata?.deletionTimestamp);
  expect((await cms().get('chain-top')).metadata?.deletionTimestamp).toBeTruthy();
  const leaf = await cms().get('chain-leaf');
  await cms().update({ ...leaf, metadata: { ...leaf.metadata, finalizers: [] } });
  await waitFor('the middle object to go', () => absent(() => cms().get('chain-mid')));
  await waitFor('the top object to go', () => absent(() => cms().get('chain-top')));
});

test('orphaning survives conflicts with concurrent writers of the dependents', async () => {
  const o = await owner('busy-owner');
  await dependent('busy-dep', [refTo(o)]);
  let stop = false;
  let writes = 0;
  const writer = (async () => {
    while (!stop) {
      try {
        const d = await cms().get('busy-dep');
        await cms().update({ ...d, data: { n: String(++writes) } });
      } catch {
        // a conflict with the collector's patch: read again
      }
    }
  })();
  await cms().delete('busy-owner', { propagationPolicy: 'Orphan' });
  try {
    await waitFor('the owner to go', () => absent(() => cms().get('busy-owner')));
    await waitFor('the reference to be removed', async () => {
      const refs = (await cms().get('busy-dep')).metadata?.ownerReferences ?? [];
      return refs.length === 0;
    });
  } finally {
    stop = true;
    await writer;
  }
  expect(writes).toBeGreaterThan(0);
  expect((await cms().get('busy-dep')).metadata?.deletionTimestamp).toBeUndefined();
});

test('orphan: the dependents lose their reference and stay', async () => {
  const o = await owner('or-owner');
  const other = await owner('or-other');
  await dependent('or-dep', [refTo(o), refTo(other)]);
  await cms().delete('or-owner', { propagationPolicy: 'Orphan' });
  await waitFor('the owner to go', () => absent(() => cms().get('or-owner')));
  const dep = await cms().get('or-dep');
  expect(dep.metadata?.ownerReferences?.map((r) => r.name)).toEqual(['or-other']);
  expect(dep.metadata?.deletionTimestamp).toBeUndefined();
});

test('dangling references: an object whose only owner never existed goes; a solid owner keeps it', async () => {
  const ghost: OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: 'no-such-uid' };
  await dependent('dg-dep', [ghost]);
  const o = await owner('dg-owner');
  await dependent('dg-kept', [refTo(o), { ...ghost, uid: 'no-such-uid-2' }]);
  await waitFor('the orphaned object to go', () => absent(() => cms().get('dg-dep')));
  await waitFor('the dangling reference to be removed', async () => {
    const kept = await cms().get('dg-kept');
    return kept.metadata?.ownerReferences?.length === 1;
  });
  expect((await cms().get('dg-kept')).metadata?.ownerReferences?.[0]?.uid).toBe(o.metadata?.uid);
});

test('an owner deleted while its dependents are being created is still collected', async () => {
  const o = await owner('mid-owner');
  const deps = Array.from({ length: 10 }, (_, i) => dependent(`mid-dep-${i}`, [refTo(o)]));
  const del = cms().delete('mid-owner');
  await Promise.all([...deps, del]);
  for (let i = 0; i < 10; i++) await waitFor(`mid-dep-${i} to go`, () => absent(() => cms().get(`mid-dep-${i}`)));
});

test('a reference across namespaces is dangling and reported; a cluster-scoped object naming a namespaced owner is left alone', async () => {
  const o = await owner('xns-owner');
  await h.client
    .resource(ConfigMapKind, 'other')
    .create({ metadata: { name: 'xns-dep', ownerReferences: [refTo(o)] } });
  await waitFor('the cross-namespace dependent to go', () =>
    absent(() => h.client.resource(ConfigMapKind, 'other').get('xns-dep')),
  );
  await waitFor('an OwnerRefInvalidNamespace event about it', async () => {
    const events = (await h.client.resource(EventKind, 'other').list()).items;
    return events.some((e) => e.reason === 'OwnerRefInvalidNamespace' && e.involvedObject?.name === 'xns-dep');
  });
  const events = (await h.client.resource(EventKind, 'other').list()).items;
  const ev = events.find((e) => e.reason === 'OwnerRefInvalidNamespace');
  expect(ev?.type).toBe('Warning');
  expect(ev?.message).toBe(
    `ownerRef [v1/ConfigMap, namespace: other, name: xns-owner, uid: ${o.metadata?.uid}] does not exist in namespace "other"`,
  );

  await h.client
    .resource(ClusterRoleKind)
    .create({ metadata: { name: 'gc-cluster-dep', ownerReferences: [refTo(o)] }, rules: [] });
  await waitFor('an OwnerRefInvalidNamespace event about the cluster-scoped object', async () => {
    const evs = (await h.client.resource(EventKind, 'default').list()).items;
    return evs.some((e) => e.reason === 'OwnerRefInvalidNamespace' && e.involvedObject?.name === 'gc-cluster-dep');
  });
  expect((await h.client.resource(ClusterRoleKind).get('gc-cluster-dep')).metadata?.deletionTimestamp).toBeUndefined();
  expect(h.errors).toEqual([]);
});

test('an owner of a kind the server does not serve is not taken for absent', async () => {
  await dependent('unknown-kind', [
    { apiVersion: 'example.platform/v1', kind: 'Widget', name: 'w', uid: 'widget-uid' },
  ]);
  // Give the collector time to look at it (it retries with back-off, as 1.21 does for an unknown mapping).
  await new Promise((r) => setTimeout(r, 1500));
  expect((await cms().get('unknown-kind')).metadata?.deletionTimestamp).toBeUndefined();
  expect(h.errors).toEqual([]);
});
