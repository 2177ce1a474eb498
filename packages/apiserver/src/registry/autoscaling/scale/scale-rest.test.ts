import { DeploymentKind, ReplicationControllerKind } from '@platform/api';

import { scaleOf, validateScale } from './scale-rest';

describe('scale', () => {
  it('describes a deployment', () => {
    const scale = scaleOf(DeploymentKind, {
      metadata: { name: 'd', namespace: 'n', resourceVersion: '7', uid: 'u' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'a' }, matchExpressions: [{ key: 't', operator: 'Exists' }] },
      },
      status: { replicas: 2 },
    });
    expect(scale).toEqual({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'd', namespace: 'n', resourceVersion: '7', uid: 'u', creationTimestamp: undefined },
      spec: { replicas: 3 },
      status: { replicas: 2, selector: 'app=a,t' },
    });
  });

  it('describes a replication controller with its map selector', () => {
    expect(scaleOf(ReplicationControllerKind, { spec: { selector: { b: '2', a: '1' } } }).status).toEqual({
      replicas: 0,
      selector: 'a=1,b=2',
    });
  });

  it.each<[number, number]>([
    [0, 0],
    [5, 0],
    [-1, 1],
  ])('replicas %d gives %d errors', (replicas, count) => {
    expect(validateScale({ spec: { replicas } })).toHaveLength(count);
  });
});
