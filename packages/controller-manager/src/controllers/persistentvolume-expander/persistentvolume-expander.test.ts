import { EventKind, NamespaceKind, type PersistentVolumeClaim, PersistentVolumeClaimKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { EXTERNAL_EXPANDING_MESSAGE, persistentVolumeExpanderController, resizeRequest } from './index';

jest.setTimeout(90_000);

const NS = 'expand';
const claim = (want: string, have: string, phase = 'Bound'): PersistentVolumeClaim =>
  ({
    metadata: { name: 'c', namespace: NS },
    spec: { volumeName: 'pv', resources: { requests: { storage: want } } },
    status: { phase, capacity: { storage: have } },
  }) as PersistentVolumeClaim;

test('resizeRequest: a bound claim asking for more than its capacity', () => {
  expect(resizeRequest(claim('2Gi', '1Gi'))).toBe('2Gi');
  expect(resizeRequest(claim('1024Mi', '1Gi'))).toBeUndefined();
  expect(resizeRequest(claim('2Gi', '1Gi', 'Pending'))).toBeUndefined();
});

describe('against an API server', () => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness();
    await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
    h.start(persistentVolumeExpanderController, (o) => (o.expandPersistentVolumes = true));
  });
  afterAll(async () => {
    await h?.stop();
  });

  test('a claim that asks to grow gets ExternalExpanding', async () => {
    const claims = h.client.resource(PersistentVolumeClaimKind, NS);
    const c = await claims.create({
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: 'pv' },
    } as PersistentVolumeClaim);
    await claims.updateStatus({ ...c, status: { phase: 'Bound', capacity: { storage: '1Gi' } } });
    await claims.patch('data', 'merge', { spec: { resources: { requests: { storage: '2Gi' } } } });
    await waitFor('the ExternalExpanding Event', async () =>
      (await h.client.resource(EventKind, NS).list()).items.some(
        (e) =>
          e.involvedObject?.name === 'data' &&
          e.reason === 'ExternalExpanding' &&
          e.message === EXTERNAL_EXPANDING_MESSAGE,
      ),
    );
    expect(h.errors).toEqual([]);
  });
});
