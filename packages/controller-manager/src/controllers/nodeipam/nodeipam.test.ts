/**
 * The node IPAM controller against a real API server: dual-stack CIDRs for new Nodes, the service range and
 * existing Nodes' CIDRs kept out, a full range reported on the Node (an Event) and resolved by a delete, and a
 * restart that recovers what Nodes hold instead of handing it out twice.
 */
import { EventKind, type Node, NodeKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { CIDR_NOT_AVAILABLE, type NodeIPAMConfig, nodeIPAMController, podCIDRsOf } from './index';

jest.setTimeout(120_000);

let h: ControllerHarness;
beforeAll(async () => {
  h = await startControllerHarness();
}, 90_000);
afterAll(async () => {
  await h?.stop();
});

const configure = (o: NodeIPAMConfig): void => {
  Object.assign(o, {
    allocateNodeCIDRs: true,
    // Four IPv4 node CIDRs, the second of them taken by services; four IPv6 ones.
    clusterCIDR: '10.10.0.0/24,fd00:10::/112',
    serviceClusterIPRange: '10.10.0.64/26',
    nodeCIDRMaskSizeIPv4: 26,
    nodeCIDRMaskSizeIPv6: 114,
  });
};

const nodes = () => h.client.resource(NodeKind);
const cidrsOf = async (name: string): Promise<string[]> => podCIDRsOf((await nodes().get(name)) as Node);
const notAvailable = async (name: string): Promise<boolean> =>
  (await h.client.resource(EventKind).list({ fieldSelector: `involvedObject.name=${name}` })).items.some(
    (e) => (e as { reason?: string }).reason === CIDR_NOT_AVAILABLE,
  );

test('allocates, reports a full range, frees on delete and recovers after a restart', async () => {
  // A Node that already holds the first CIDRs (set by an earlier run).
  await nodes().create({
    metadata: { name: 'pre' },
    spec: { podCIDR: '10.10.0.0/26', podCIDRs: ['10.10.0.0/26', 'fd00:10::/114'] },
  });
  let stop = h.start(nodeIPAMController, configure);

  await nodes().create({ metadata: { name: 'n1' } });
  await waitFor('n1 gets its CIDRs', async () => (await cidrsOf('n1')).length === 2);
  // Not the first (pre's), not the second (the services'): the third; IPv6 skips pre's.
  expect(await cidrsOf('n1')).toEqual(['10.10.0.128/26', 'fd00:10::4000/114']);
  expect((await nodes().get('n1')).spec?.podCIDR).toBe('10.10.0.128/26');

  await nodes().create({ metadata: { name: 'n2' } });
  await waitFor('n2 gets its CIDRs', async () => (await cidrsOf('n2')).length === 2);
  expect(await cidrsOf('n2')).toEqual(['10.10.0.192/26', 'fd00:10::8000/114']);

  // No IPv4 CIDR is left: an Event on the Node, no CIDRs, and the controller goes on.
  await nodes().create({ metadata: { name: 'n3' } });
  await waitFor('CIDRNotAvailable on n3', () => notAvailable('n3'));
  expect(await cidrsOf('n3')).toEqual([]);

  // A delete frees n1's CIDRs, and the waiting Node gets the IPv4 one.
  await nodes().delete('n1');
  await waitFor('n3 gets its CIDRs', async () => (await cidrsOf('n3')).length === 2);
  const n3 = await cidrsOf('n3');
  expect(n3[0]).toBe('10.10.0.128/26');
  expect(n3[1]).toMatch(/^fd00:10::/);
  expect(n3[1]).not.toBe('fd00:10::8000/114');

  // Restart with a new Node created while the controller was down: every IPv4 CIDR is held (pre, services, n3,
  // n2), so it must get none rather than one a Node already has.
  await stop();
  await nodes().create({ metadata: { name: 'n4' } });
  stop = h.start(nodeIPAMController, configure);
  await waitFor('CIDRNotAvailable on n4', () => notAvailable('n4'));
  expect(await cidrsOf('n4')).toEqual([]);
  await nodes().delete('n2');
  await waitFor('n4 gets its CIDRs', async () => (await cidrsOf('n4')).length === 2);
  expect((await cidrsOf('n4'))[0]).toBe('10.10.0.192/26');

  // Every Node's CIDRs are distinct.
  const all = (await nodes().list()).items.flatMap((n) => podCIDRsOf(n as Node));
  expect(new Set(all).size).toBe(all.length);
  await stop();
  expect(h.errors).toEqual([]);
});

test('bad options fail the controller with a message naming the flag', async () => {
  const stop = h.start(nodeIPAMController, (o) =>
    Object.assign(o, { allocateNodeCIDRs: true, clusterCIDR: '10.0.0.0/16', nodeCIDRMaskSize: 8 }),
  );
  await waitFor('the controller fails', () => h.errors.length > 0);
  expect(String(h.errors[0])).toMatch(/--node-cidr-mask-size \(8\) and --cluster-cidr/);
  h.errors.length = 0;
  await stop();
});
