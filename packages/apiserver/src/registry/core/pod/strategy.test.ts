import { type ApiObject, type Pod, PodKind } from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { podQOSClass, podStrategy, POD_DELETE_STRATEGY } from './strategy';

const ctx: RequestContext = { namespace: 'default', now: () => 0 };

const pod = (resources?: object, extra: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name: 'p' },
  spec: {
    containers: [{ name: 'c', image: 'i', ...(resources ? { resources } : {}) }],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    ...extra,
  },
});

describe('podQOSClass', () => {
  it.each<[string, object | undefined, string]>([
    ['no resources', undefined, 'BestEffort'],
    [
      'limits equal requests',
      { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1Gi' } },
      'Guaranteed',
    ],
    ['requests only', { requests: { cpu: '100m' } }, 'Burstable'],
    ['cpu limit only', { limits: { cpu: '1' } }, 'Burstable'],
  ])('%s → %s', (_name, resources, expected) => {
    expect(podQOSClass(pod(resources))).toBe(expected);
  });
});

describe('pod strategy', () => {
  it('resets the status on create', () => {
    const p = { ...pod(), status: { phase: 'Running', hostIP: '1.2.3.4' } } as Pod;
    podStrategy(PodKind).prepareForCreate(ctx, p as ApiObject);
    expect(p.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
  });

  it('keeps the status on update of the main resource', () => {
    const old = { ...pod(), status: { phase: 'Running' } } as Pod;
    const next = { ...pod(), status: { phase: 'Failed' } } as Pod;
    podStrategy(PodKind).prepareForUpdate(ctx, next as ApiObject, old as ApiObject);
    expect(next.status).toEqual({ phase: 'Running' });
  });
});

describe('pod graceful deletion', () => {
  it.each<[string, Pod, number | undefined, number]>([
    ['an unscheduled pod goes at once', pod(), undefined, 0],
    ['a bound pod waits its termination grace period', pod(undefined, { nodeName: 'n' }), undefined, 30],
    [
      'a bound pod with its own period',
      pod(undefined, { nodeName: 'n', terminationGracePeriodSeconds: 5 }),
      undefined,
      5,
    ],
    ['the request decides', pod(undefined, { nodeName: 'n' }), 0, 0],
    ['a finished pod goes at once', { ...pod(undefined, { nodeName: 'n' }), status: { phase: 'Succeeded' } }, 10, 0],
  ])('%s', (_name, p, requested, expected) => {
    expect(POD_DELETE_STRATEGY.gracePeriod?.(ctx, p as ApiObject, requested)).toBe(expected);
  });
});
