import { tableColumns, toTable } from '../../../table/table';
import { type Node, NodeKind, nodeRoles, nodeStatus } from './node';

const NOW = Date.parse('2021-04-10T12:00:00Z');

function row(n: Node): unknown[] {
  return toTable(tableColumns(NodeKind.spec.columns), [n], { now: NOW, includeObject: 'None' }).rows[0]?.cells ?? [];
}

describe('node printer columns', () => {
  it.each<[string, Node, string]>([
    ['Ready', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, 'Ready'],
    ['NotReady', { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, 'NotReady'],
    [
      'NotReady for an Unknown Ready condition',
      { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } },
      'NotReady',
    ],
    [
      'Unknown without a Ready condition',
      { status: { conditions: [{ type: 'MemoryPressure', status: 'False' }] } },
      'Unknown',
    ],
    [
      'NotReady,SchedulingDisabled when cordoned',
      { spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'False' }] } },
      'NotReady,SchedulingDisabled',
    ],
    ['Unknown,SchedulingDisabled', { spec: { unschedulable: true } }, 'Unknown,SchedulingDisabled'],
  ])('prints %s', (_what, node, status) => {
    expect(nodeStatus(node)).toBe(status);
  });

  it('reads roles from node-role labels, sorted, <none> without', () => {
    const node: Node = {
      metadata: {
        labels: {
          'node-role.platform/worker': '',
          'node-role.platform/control-plane': '',
          'node-role.kubernetes.io/ingress': 'true',
          'node-role.platform/': 'ignored',
          'kubernetes.io/role': 'edge',
          app: 'x',
        },
      },
    };
    expect(nodeRoles(node)).toEqual(['control-plane', 'edge', 'ingress', 'worker']);
    expect(row({ metadata: { name: 'n' } })[2]).toBe('<none>');
  });

  it('prints a full row, wide columns included', () => {
    const node: Node = {
      metadata: {
        name: 'node-1',
        creationTimestamp: '2021-04-08T12:00:00Z',
        labels: { 'node-role.platform/worker': '' },
      },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        addresses: [
          { type: 'Hostname', address: 'node-1' },
          { type: 'InternalIP', address: '192.168.1.10' },
        ],
        nodeInfo: {
          kubeletVersion: 'v1.21.0',
          osImage: 'Debian GNU/Linux 11',
          kernelVersion: '5.10.0',
          containerRuntimeVersion: 'process://1.0',
        },
      },
    };
    expect(row(node)).toEqual([
      'node-1',
      'Ready',
      'worker',
      '2d',
      'v1.21.0',
      '192.168.1.10',
      '<none>',
      'Debian GNU/Linux 11',
      '5.10.0',
      'process://1.0',
    ]);
  });

  it('selects on spec.unschedulable', () => {
    expect(NodeKind.fields['spec.unschedulable']?.({ spec: { unschedulable: true } })).toBe('true');
    expect(NodeKind.fields['spec.unschedulable']?.({})).toBe('false');
  });
});
