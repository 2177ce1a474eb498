import { type ApiObject } from '@platform/api';

import { NodeGraph, podReferences } from './graph';

function pod(name: string, nodeName: string | undefined, spec: object): ApiObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns' },
    spec: { nodeName, ...spec },
  } as ApiObject;
}

describe('podReferences', () => {
  it('finds secrets, config maps, claims and the service account wherever a pod names them', () => {
    const refs = podReferences(
      pod('p', 'n', {
        serviceAccountName: 'robot',
        imagePullSecrets: [{ name: 'pull' }],
        volumes: [
          { name: 'a', secret: { secretName: 'vol-secret' } },
          { name: 'b', configMap: { name: 'vol-cm' } },
          { name: 'c', persistentVolumeClaim: { claimName: 'claim' } },
          {
            name: 'd',
            projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] },
          },
          { name: 'e', csi: { driver: 'x', nodePublishSecretRef: { name: 'csi-secret' } } },
          { name: 'scratch', ephemeral: { volumeClaimTemplate: {} } },
        ],
        initContainers: [
          { name: 'i', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'init-secret', key: 'k' } } }] },
        ],
        containers: [
          {
            name: 'c',
            envFrom: [{ configMapRef: { name: 'env-cm' } }, { secretRef: { name: 'env-secret' } }],
            env: [{ name: 'B', valueFrom: { configMapKeyRef: { name: 'key-cm', key: 'k' } } }],
          },
        ],
      }),
    );
    expect(refs.map((r) => `${r.kind}/${r.name}`).sort()).toEqual(
      [
        'serviceaccount/robot',
        'secret/pull',
        'secret/vol-secret',
        'configmap/vol-cm',
        'pvc/claim',
        'secret/proj-secret',
        'configmap/proj-cm',
        'secret/csi-secret',
        'pvc/p-scratch',
        'secret/init-secret',
        'configmap/env-cm',
        'secret/env-secret',
        'configmap/key-cm',
      ].sort(),
    );
  });

  it('reads a malformed pod without failing', () => {
    expect(
      podReferences({ spec: { volumes: 'x', containers: [null, 1, { env: {} }] } } as unknown as ApiObject),
    ).toEqual([{ kind: 'serviceaccount', name: 'default' }]);
  });
});

describe('NodeGraph', () => {
  it('follows pods as they are bound, changed and removed, and PVs through their claims', () => {
    const g = new NodeGraph();
    g.podHandler.replace([
      pod('a', 'n1', {
        volumes: [
          { name: 'v', secret: { secretName: 's' } },
          { name: 'c', persistentVolumeClaim: { claimName: 'pvc' } },
        ],
      }),
      pod('b', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's' } }] }),
      pod('pending', undefined, { volumes: [{ name: 'v', secret: { secretName: 'p' } }] }),
    ]);
    g.pvHandler.replace([
      { metadata: { name: 'pv1' }, spec: { claimRef: { namespace: 'ns', name: 'pvc' } } } as ApiObject,
    ]);
    expect(g.nodeOfPod('ns', 'a')).toBe('n1');
    expect(g.nodeOfPod('ns', 'pending')).toBeUndefined();
    expect(g.references('n1', 'secret', 'ns', 's')).toBe(true);
    expect(g.references('n1', 'secret', 'ns', 'p')).toBe(false);
    expect(g.references('n2', 'secret', 'ns', 's')).toBe(false);
    expect(g.reachesPV('n1', 'pv1')).toBe(true);
    expect(g.reachesPV('n2', 'pv1')).toBe(false);
    // Two pods reference s: it stays reachable until both are gone.
    g.podHandler.remove(pod('a', 'n1', {}));
    expect(g.references('n1', 'secret', 'ns', 's')).toBe(true);
    expect(g.reachesPV('n1', 'pv1')).toBe(false);
    g.podHandler.upsert(pod('b', 'n2', { volumes: [{ name: 'v', secret: { secretName: 's' } }] }));
    expect(g.references('n1', 'secret', 'ns', 's')).toBe(false);
    expect(g.references('n2', 'secret', 'ns', 's')).toBe(true);
  });
});
