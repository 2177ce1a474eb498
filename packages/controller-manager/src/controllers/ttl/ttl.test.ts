import { NodeKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { TTL_ANNOTATION, ttlController } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;

beforeAll(async () => {
  h = await startControllerHarness();
  // Small steps: up to 2 nodes 0 s, from 2 to 4 nodes 15 s (and beyond 30 s).
  h.start(ttlController, (o) => {
    o.boundaries = [
      { sizeMin: 0, sizeMax: 2, ttlSeconds: 0 },
      { sizeMin: 2, sizeMax: 4, ttlSeconds: 15 },
      { sizeMin: 3, sizeMax: 1000, ttlSeconds: 30 },
    ];
  });
});

afterAll(async () => {
  await h?.stop();
});

const ttls = async (): Promise<string> =>
  (await h.client.resource(NodeKind).list()).items
    .map((n) => `${n.metadata?.name}=${n.metadata?.annotations?.[TTL_ANNOTATION] ?? '-'}`)
    .sort()
    .join(',');

test('the TTL annotation follows the cluster size, with hysteresis', async () => {
  const nodes = h.client.resource(NodeKind);
  await nodes.create({ metadata: { name: 'n1' } });
  await nodes.create({ metadata: { name: 'n2' } });
  await waitFor('0 on two nodes', async () => (await ttls()) === 'n1=0,n2=0');
  await nodes.create({ metadata: { name: 'n3' } });
  await waitFor('15 on three nodes', async () => (await ttls()) === 'n1=15,n2=15,n3=15');
  // Back to two nodes: still within the 15 s step (its minimum is 2).
  await nodes.delete('n3');
  await new Promise((r) => setTimeout(r, 300));
  expect(await ttls()).toBe('n1=15,n2=15');
  await nodes.delete('n2');
  await waitFor('0 on one node', async () => (await ttls()) === 'n1=0');
  // An annotation changed by hand is set back.
  await nodes.patch('n1', 'merge', { metadata: { annotations: { [TTL_ANNOTATION]: '99' } } });
  await waitFor('set back', async () => (await ttls()) === 'n1=0');
  expect(h.errors).toEqual([]);
});
