import {
  EventKind,
  NamespaceKind,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  type Pod,
  PodKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { ephemeralClaims, ephemeralVolumeController } from './index';

jest.setTimeout(90_000);

const NS = 'eph';
const pod = (name: string): Pod =>
  ({
    metadata: { name, namespace: NS },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      volumes: [
        {
          name: 'scratch',
          ephemeral: {
            volumeClaimTemplate: {
              metadata: { labels: { type: 'scratch' } },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            },
          },
        },
        { name: 'plain', emptyDir: {} },
      ],
    },
  }) as unknown as Pod;

test('ephemeralClaims: one claim per ephemeral volume, named and owned after the pod', () => {
  const claims = ephemeralClaims({ ...pod('p'), metadata: { name: 'p', namespace: NS, uid: 'u1' } });
  expect(claims.map((c) => c.metadata?.name)).toEqual(['p-scratch']);
  expect(claims[0]?.metadata?.ownerReferences).toEqual([
    { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u1', controller: true, blockOwnerDeletion: true },
  ]);
  expect(claims[0]?.metadata?.labels).toEqual({ type: 'scratch' });
});

describe('against an API server', () => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness();
    await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
    h.start(ephemeralVolumeController, (o) => (o.genericEphemeralVolume = true));
  });
  afterAll(async () => {
    await h?.stop();
  });
  const claims = () => h.client.resource(PersistentVolumeClaimKind, NS);

  test('the claim of an ephemeral volume is created, owned by its pod, and again after it is deleted', async () => {
    const p = await h.client.resource(PodKind, NS).create(pod('web'));
    let c: PersistentVolumeClaim | undefined;
    await waitFor('the claim', async () => {
      c = (await claims().list()).items.find((x) => x.metadata?.name === 'web-scratch');
      return c !== undefined;
    });
    expect(c?.metadata?.ownerReferences?.[0]?.uid).toBe(p.metadata?.uid);
    expect(c?.spec?.resources?.requests?.storage).toBe('1Gi');
    await claims().delete('web-scratch');
    await waitFor('created again', async () =>
      (await claims().list()).items.some(
        (x) => x.metadata?.name === 'web-scratch' && x.metadata.uid !== c?.metadata?.uid,
      ),
    );
  });

  test("a claim of the volume's name that the pod does not own is left alone, with an Event", async () => {
    await claims().create({
      metadata: { name: 'other-scratch' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    } as PersistentVolumeClaim);
    await h.client.resource(PodKind, NS).create(pod('other'));
    await waitFor('the FailedBinding Event', async () =>
      (await h.client.resource(EventKind, NS).list()).items.some(
        (e) =>
          e.involvedObject?.name === 'other' &&
          e.reason === 'FailedBinding' &&
          /was not created for the pod/.test(e.message ?? ''),
      ),
    );
    expect((await claims().get('other-scratch')).metadata?.ownerReferences).toBeUndefined();
    expect(h.errors).toEqual([]);
  });
});
