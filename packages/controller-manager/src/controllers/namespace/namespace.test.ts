import {
  ConfigMapKind,
  DeploymentKind,
  isNotFound,
  type Namespace,
  NamespaceKind,
  PodKind,
  SecretKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { namespaceController } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;

beforeAll(async () => {
  h = await startControllerHarness();
  h.start(namespaceController, (o) => {
    o.deletionGracePeriodMs = 100;
  });
});

afterAll(async () => {
  await h?.stop();
});

async function gone(kind: typeof NamespaceKind, name: string): Promise<boolean> {
  try {
    await h.client.resource(kind).get(name);
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

function condition(ns: Namespace, type: string) {
  return ns.status?.conditions?.find((c) => c.type === type);
}

const podSpec = { containers: [{ name: 'c', image: 'busybox' }] };

test('a deleted namespace is emptied of every kind of content, then removed', async () => {
  await h.client.resource(NamespaceKind).create({ metadata: { name: 'doomed' } });
  await h.client.resource(ConfigMapKind, 'doomed').create({ metadata: { name: 'cm' }, data: { a: 'b' } });
  await h.client.resource(SecretKind, 'doomed').create({ metadata: { name: 's' }, data: {} });
  await h.client.resource(PodKind, 'doomed').create({ metadata: { name: 'p' }, spec: podSpec });
  await h.client.resource(DeploymentKind, 'doomed').create({
    metadata: { name: 'd' },
    spec: {
      selector: { matchLabels: { app: 'd' } },
      template: { metadata: { labels: { app: 'd' } }, spec: podSpec },
    },
  });
  await h.client.resource(NamespaceKind).delete('doomed');
  await waitFor('namespace doomed to be removed', () => gone(NamespaceKind, 'doomed'));
  // Its content went with it (a namespace of the same name starts empty).
  await h.client.resource(NamespaceKind).create({ metadata: { name: 'doomed' } });
  expect((await h.client.resource(ConfigMapKind, 'doomed').list()).items).toHaveLength(0);
  expect((await h.client.resource(DeploymentKind, 'doomed').list()).items).toHaveLength(0);
  expect((await h.client.resource(PodKind, 'doomed').list()).items).toHaveLength(0);
  expect(h.errors).toEqual([]);
});

test('content held by a finalizer keeps the namespace, with the conditions saying why', async () => {
  const nsName = 'held';
  await h.client.resource(NamespaceKind).create({ metadata: { name: nsName } });
  await h.client
    .resource(ConfigMapKind, nsName)
    .create({ metadata: { name: 'kept', finalizers: ['example.platform/hold'] }, data: {} });
  await h.client.resource(ConfigMapKind, nsName).create({ metadata: { name: 'plain' }, data: {} });
  await h.client.resource(NamespaceKind).delete(nsName);

  let seen: Namespace | undefined;
  await waitFor('the remaining-content conditions', async () => {
    seen = await h.client.resource(NamespaceKind).get(nsName);
    return condition(seen, 'NamespaceFinalizersRemaining')?.status === 'True';
  });
  const ns = seen!;
  expect(ns.status?.phase).toBe('Terminating');
  expect(ns.spec?.finalizers).toEqual(['platform']);
  expect(condition(ns, 'NamespaceContentRemaining')).toMatchObject({
    status: 'True',
    reason: 'SomeResourcesRemain',
    message: 'Some resources are remaining: configmaps. has 1 resource instances',
  });
  expect(condition(ns, 'NamespaceFinalizersRemaining')).toMatchObject({
    status: 'True',
    reason: 'SomeFinalizersRemain',
    message: 'Some content in the namespace has finalizers remaining: example.platform/hold in 1 resource instances',
  });
  expect(condition(ns, 'NamespaceDeletionDiscoveryFailure')).toMatchObject({
    status: 'False',
    reason: 'ResourcesDiscovered',
    message: 'All resources successfully discovered',
  });
  expect(condition(ns, 'NamespaceDeletionContentFailure')).toMatchObject({
    status: 'False',
    reason: 'ContentDeleted',
  });
  // The finalizer-less object went at once; the held one is marked for deletion.
  const left = (await h.client.resource(ConfigMapKind, nsName).list()).items;
  expect(left.map((c) => c.metadata?.name)).toEqual(['kept']);
  expect(left[0]?.metadata?.deletionTimestamp).toBeTruthy();

  // Releasing it lets the namespace go (the controller comes back after 15/2+1 s).
  const kept = left[0]!;
  kept.metadata = { ...kept.metadata, finalizers: [] };
  await h.client.resource(ConfigMapKind, nsName).update(kept);
  await waitFor('namespace held to be removed', () => gone(NamespaceKind, nsName));
  expect(h.errors).toEqual([]);
});

test('another finalizer of spec.finalizers is left for its owner; the namespace goes when it is removed', async () => {
  const nsName = 'shared';
  await h.client
    .resource(NamespaceKind)
    .create({ metadata: { name: nsName }, spec: { finalizers: ['example.platform/other'] } });
  await h.client.resource(ConfigMapKind, nsName).create({ metadata: { name: 'cm' }, data: {} });
  await h.client.resource(NamespaceKind).delete(nsName);
  await waitFor('the platform finalizer to be removed', async () => {
    const ns = await h.client.resource(NamespaceKind).get(nsName);
    return JSON.stringify(ns.spec?.finalizers) === JSON.stringify(['example.platform/other']);
  });
  expect((await h.client.resource(ConfigMapKind, nsName).list()).items).toHaveLength(0);
  const ns = await h.client.resource(NamespaceKind).get(nsName);
  expect(ns.status?.phase).toBe('Terminating');
  // The other finalizer's owner finishes: the API server removes the namespace.
  await h.client
    .resource(NamespaceKind)
    .updateSubresource(nsName, 'finalize', { ...ns, spec: { finalizers: [] } } as Namespace);
  await waitFor('namespace shared to be removed', () => gone(NamespaceKind, nsName));
  expect(h.errors).toEqual([]);
});

test('a namespace changed by another writer while it terminates is still finalized (conflicts are retried)', async () => {
  const nsName = 'busy';
  await h.client.resource(NamespaceKind).create({ metadata: { name: nsName } });
  for (let i = 0; i < 5; i++)
    await h.client.resource(ConfigMapKind, nsName).create({ metadata: { name: `cm-${i}` }, data: {} });
  await h.client.resource(NamespaceKind).delete(nsName);
  let stop = false;
  let writes = 0;
  const writer = (async () => {
    while (!stop) {
      try {
        const ns = await h.client.resource(NamespaceKind).get(nsName);
        await h.client
          .resource(NamespaceKind)
          .update({ ...ns, metadata: { ...ns.metadata, labels: { n: String(++writes) } } });
      } catch {
        // a conflict with the controller's status write, or the namespace is gone
      }
    }
  })();
  try {
    await waitFor('namespace busy to be removed', () => gone(NamespaceKind, nsName));
  } finally {
    stop = true;
    await writer;
  }
  expect(writes).toBeGreaterThan(0);
  expect(h.errors).toEqual([]);
});
