import { parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { type NodeIPAMConfig, NodeIPAMOptions, planNodeIPAM } from './options';

const base: NodeIPAMConfig = {
  allocateNodeCIDRs: true,
  clusterCIDR: '10.244.0.0/16',
  serviceClusterIPRange: '',
  cidrAllocatorType: 'RangeAllocator',
};
const plan = (c: Partial<NodeIPAMConfig>): ReturnType<typeof planNodeIPAM> => planNodeIPAM({ ...base, ...c });
const masks = (c: Partial<NodeIPAMConfig>): number[] | undefined => plan(c).plan?.sets.map((s) => s.maskSize);

describe('planNodeIPAM', () => {
  test('mask sizes by family, with the defaults of 1.21', () => {
    expect(masks({})).toEqual([24]);
    expect(masks({ clusterCIDR: 'fd00::/48' })).toEqual([64]);
    expect(masks({ nodeCIDRMaskSize: 20 })).toEqual([20]);
    expect(masks({ nodeCIDRMaskSizeIPv4: 26 })).toEqual([26]);
    expect(masks({ clusterCIDR: '10.244.0.0/16,fd00::/48' })).toEqual([24, 64]);
    expect(masks({ clusterCIDR: 'fd00::/48, 10.244.0.0/16', nodeCIDRMaskSizeIPv6: 56 })).toEqual([56, 24]);
  });

  test.each<[Partial<NodeIPAMConfig>, RegExp]>([
    [{ clusterCIDR: '' }, /--cluster-cidr is required when --allocate-node-cidrs is true/],
    [{ clusterCIDR: '10.0.0.0/33' }, /--cluster-cidr: "10.0.0.0\/33" is not a valid CIDR/],
    [{ clusterCIDR: '10.0.0.0/16,10.1.0.0/16' }, /needs one IPv4 and one IPv6 CIDR/],
    [{ clusterCIDR: '10.0.0.0/16,fd00::/48,fd01::/48' }, /--cluster-cidr: at most two CIDRs/],
    [
      { clusterCIDR: '10.0.0.0/16,fd00::/48', nodeCIDRMaskSize: 24 },
      /--node-cidr-mask-size is not allowed with dual-stack/,
    ],
    [{ nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv4: 24 }, /not allowed if --node-cidr-mask-size is set/],
    [{ nodeCIDRMaskSizeIPv6: 64 }, /--node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster/],
    [
      { clusterCIDR: 'fd00::/48', nodeCIDRMaskSizeIPv4: 24 },
      /--node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6/,
    ],
    [
      { nodeCIDRMaskSize: 8 },
      /--node-cidr-mask-size \(8\) and --cluster-cidr: .*larger than the cluster CIDR 10.244.0.0\/16/,
    ],
    [
      { clusterCIDR: '10.0.0.0/4' },
      /the default node CIDR mask size of IPv4 \(24\) and --cluster-cidr: .*more than 2\^16/,
    ],
    [{ nodeCIDRMaskSizeIPv4: 0 }, /--node-cidr-mask-size-ipv4 must be positive, got 0/],
    [{ serviceClusterIPRange: '10.0.0.0/8' }, /--service-cluster-ip-range 10.0.0.0\/8 covers the whole cluster CIDR/],
    [{ serviceClusterIPRange: 'nope' }, /--service-cluster-ip-range: "nope" is not a valid CIDR/],
    [
      { cidrAllocatorType: 'CloudAllocator' },
      /--cidr-allocator-type=CloudAllocator is not supported: .*no cloud provider/,
    ],
    [{ cidrAllocatorType: 'Other' }, /--cidr-allocator-type: unknown allocator "Other"/],
  ])('%j is refused', (c, message) => {
    expect(plan(c).errors.join('\n')).toMatch(message);
  });

  test('nothing is planned without --allocate-node-cidrs, but bad values are still reported', () => {
    expect(plan({ allocateNodeCIDRs: false })).toEqual({ errors: [] });
    expect(plan({ allocateNodeCIDRs: false, clusterCIDR: '' })).toEqual({ errors: [] });
    expect(plan({ allocateNodeCIDRs: false, clusterCIDR: 'x' }).errors).toHaveLength(1);
  });

  test('a /8 cut into /24s is the largest split allowed (2^16 node CIDRs)', () => {
    expect(plan({ clusterCIDR: '10.0.0.0/8' }).errors).toEqual([]);
  });

  test('the service ranges are part of the plan', () => {
    expect(plan({ serviceClusterIPRange: '10.244.0.0/24,fd00::/112' }).plan?.services).toHaveLength(2);
  });
});

describe('NodeIPAMOptions', () => {
  const parse = (args: string[]): { errors: string[]; values: NodeIPAMConfig } => {
    const o = new NodeIPAMOptions();
    const cmd = new Command('test');
    o.addFlags(cmd);
    const out = parseOrExit(cmd, [o as never], args, undefined, { stdout: () => {}, stderr: () => {} });
    return { errors: out.errors.map((e) => e.message), values: o.values() };
  };

  test('defaults allocate nothing', () => {
    expect(parse([])).toEqual({
      errors: [],
      values: {
        allocateNodeCIDRs: false,
        clusterCIDR: '',
        serviceClusterIPRange: '',
        cidrAllocatorType: 'RangeAllocator',
      },
    });
  });

  test('flags reach the values and are checked together', () => {
    const r = parse(['--allocate-node-cidrs', '--cluster-cidr=10.0.0.0/16,fd00::/64', '--node-cidr-mask-size-ipv6=80']);
    expect(r.errors).toEqual([]);
    expect(r.values).toMatchObject({
      allocateNodeCIDRs: true,
      clusterCIDR: '10.0.0.0/16,fd00::/64',
      nodeCIDRMaskSizeIPv6: 80,
    });
    expect(parse(['--allocate-node-cidrs']).errors).toEqual([
      '--cluster-cidr is required when --allocate-node-cidrs is true',
    ]);
  });
});
