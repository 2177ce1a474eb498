import { tableColumns, toTable } from '../../../table/table';
import { type Pod, PodKind, podSummary } from './pod';

const NOW = Date.parse('2021-04-08T13:00:00Z');

function pod(status: Pod['status'], extra: Partial<Pod> = {}): Pod {
  return {
    metadata: { name: 'web-0', creationTimestamp: '2021-04-08T12:00:00Z', ...extra.metadata },
    spec: {
      containers: [{ name: 'a' }, { name: 'b' }],
      initContainers: [{ name: 'init-1' }, { name: 'init-2' }],
      ...extra.spec,
    },
    status,
  };
}

function row(p: Pod): unknown[] {
  return toTable(tableColumns(PodKind.spec.columns), [p], { now: NOW, includeObject: 'None' }).rows[0]?.cells ?? [];
}

describe('pod printer columns', () => {
  it('has the kubectl columns, wide ones at priority 1', () => {
    const table = toTable(tableColumns(PodKind.spec.columns), [], { now: NOW });
    expect(table.columnDefinitions.map((c) => [c.name, c.priority])).toEqual([
      ['Name', 0],
      ['Ready', 0],
      ['Status', 0],
      ['Restarts', 0],
      ['Age', 0],
      ['IP', 1],
      ['Node', 1],
      ['Nominated Node', 1],
      ['Readiness Gates', 1],
    ]);
  });

  it('prints a crashing container: CrashLoopBackOff, 1/2 ready, restarts summed', () => {
    const p = pod({
      phase: 'Running',
      podIP: '10.1.0.5',
      podIPs: [{ ip: '10.1.0.5' }],
      initContainerStatuses: [
        { name: 'init-1', state: { terminated: { exitCode: 0, reason: 'Completed' } }, restartCount: 9 },
        { name: 'init-2', state: { terminated: { exitCode: 0 } } },
      ],
      containerStatuses: [
        { name: 'a', ready: true, restartCount: 1, state: { running: { startedAt: '2021-04-08T12:00:00Z' } } },
        { name: 'b', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } } },
      ],
    });
    p.spec = { ...p.spec, containers: p.spec?.containers ?? [], nodeName: 'node-1' };
    expect(row(p)).toEqual(['web-0', '1/2', 'CrashLoopBackOff', 5, '60m', '10.1.0.5', 'node-1', '<none>', '<none>']);
  });

  it('prints Terminating for a pod being deleted, whatever its containers do', () => {
    const p = pod(
      { phase: 'Running', containerStatuses: [{ name: 'a', ready: true, state: { running: {} } }] },
      { metadata: { name: 'web-0', deletionTimestamp: '2021-04-08T12:59:00Z' } },
    );
    expect(podSummary(p).reason).toBe('Terminating');
    expect(podSummary({ ...p, status: { ...p.status, reason: 'NodeLost' } }).reason).toBe('Unknown');
  });

  it.each<[string, Pod['status'], string]>([
    ['the phase when nothing else is known', { phase: 'Pending' }, 'Pending'],
    ['the pod reason over the phase', { phase: 'Failed', reason: 'Evicted' }, 'Evicted'],
    [
      'init progress',
      { phase: 'Pending', initContainerStatuses: [{ name: 'init-1', state: { running: {} } }] },
      'Init:0/2',
    ],
    [
      'an init container waiting with a reason',
      { initContainerStatuses: [{ name: 'init-1', state: { waiting: { reason: 'ImagePullBackOff' } } }] },
      'Init:ImagePullBackOff',
    ],
    [
      'an init container that failed with an exit code',
      { initContainerStatuses: [{ name: 'init-1', state: { terminated: { exitCode: 2 } } }] },
      'Init:ExitCode:2',
    ],
    [
      'an init container killed by a signal',
      { initContainerStatuses: [{ name: 'init-1', state: { terminated: { exitCode: 137, signal: 9 } } }] },
      'Init:Signal:9',
    ],
    [
      'an init container that failed with a reason',
      { initContainerStatuses: [{ name: 'init-1', state: { terminated: { exitCode: 1, reason: 'Error' } } }] },
      'Init:Error',
    ],
    [
      'a terminated container reason',
      { phase: 'Failed', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 1, reason: 'Error' } } }] },
      'Error',
    ],
    [
      'an exit code without a reason',
      { phase: 'Failed', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 3 } } }] },
      'ExitCode:3',
    ],
    [
      'Running again when a container still runs after another completed, and the pod is ready',
      {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          { name: 'a', ready: true, state: { running: {} } },
          { name: 'b', state: { terminated: { exitCode: 0, reason: 'Completed' } } },
        ],
      },
      'Running',
    ],
    [
      'NotReady when a container still runs after another completed, and the pod is not ready',
      {
        phase: 'Running',
        containerStatuses: [
          { name: 'a', ready: true, state: { running: {} } },
          { name: 'b', state: { terminated: { exitCode: 0, reason: 'Completed' } } },
        ],
      },
      'NotReady',
    ],
  ])('prints %s', (_what, status, reason) => {
    expect(podSummary(pod(status)).reason).toBe(reason);
  });

  it('counts only init container restarts while initializing', () => {
    const s = podSummary(
      pod({
        initContainerStatuses: [
          { name: 'init-1', restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
        containerStatuses: [{ name: 'a', restartCount: 100 }],
      }),
    );
    expect(s).toEqual({ ready: 0, total: 2, reason: 'Init:CrashLoopBackOff', restarts: 3 });
  });

  it('prints readiness gates as true/total', () => {
    const p = pod(
      {
        conditions: [
          { type: 'example.com/a', status: 'True' },
          { type: 'example.com/b', status: 'False' },
        ],
      },
      {
        spec: {
          containers: [{ name: 'a' }],
          readinessGates: [{ conditionType: 'example.com/a' }, { conditionType: 'example.com/b' }],
        },
      },
    );
    expect(row(p)[8]).toBe('1/2');
  });
});

describe('pod field selectors', () => {
  it('reads every field Kubernetes 1.21 supports', () => {
    const p: Pod = {
      metadata: { name: 'web-0', namespace: 'prod' },
      spec: {
        containers: [{ name: 'a' }],
        nodeName: 'node-1',
        restartPolicy: 'OnFailure',
        schedulerName: 'default-scheduler',
        serviceAccountName: 'web',
      },
      status: { phase: 'Running', podIP: '10.0.0.9', podIPs: [{ ip: '10.0.0.5' }], nominatedNodeName: 'node-2' },
    };
    const values = Object.fromEntries(Object.entries(PodKind.fields).map(([k, read]) => [k, read(p)]));
    expect(values).toEqual({
      'metadata.name': 'web-0',
      'metadata.namespace': 'prod',
      'spec.nodeName': 'node-1',
      'spec.restartPolicy': 'OnFailure',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': 'web',
      'status.phase': 'Running',
      'status.podIP': '10.0.0.5',
      'status.nominatedNodeName': 'node-2',
    });
    const empty = Object.values(PodKind.fields).map((read) => read({}));
    expect(empty).toEqual(Array(9).fill(''));
  });
});
