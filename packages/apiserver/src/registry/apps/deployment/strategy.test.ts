import { type ApiObject, type Deployment, DeploymentKind, type FieldError } from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { deploymentStrategy, validateDeployment } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);
const ctx: RequestContext = { namespace: 'default', now: () => 0 };

const deployment = (change: (spec: NonNullable<Deployment['spec']>) => void = () => {}): Deployment => {
  const spec: NonNullable<Deployment['spec']> = {
    replicas: 1,
    selector: { matchLabels: { app: 'a' } },
    template: {
      metadata: { labels: { app: 'a' } },
      spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
    },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
    progressDeadlineSeconds: 600,
  };
  change(spec);
  return { metadata: { name: 'd' }, spec };
};

describe('validateDeployment', () => {
  it.each<[string, (s: NonNullable<Deployment['spec']>) => void, string[]]>([
    ['a valid deployment', () => {}, []],
    ['negative replicas', (s) => (s.replicas = -1), ['FieldValueInvalid spec.replicas']],
    ['an empty selector', (s) => (s.selector = {}), ['FieldValueInvalid spec.selector']],
    [
      'a selector that does not match the template',
      (s) => (s.selector = { matchLabels: { app: 'b' } }),
      ['FieldValueInvalid spec.template.metadata.labels'],
    ],
    [
      'a template that restarts Never',
      (s) => (s.template.spec!.restartPolicy = 'Never'),
      ['FieldValueNotSupported spec.template.spec.restartPolicy'],
    ],
    [
      'a template with activeDeadlineSeconds',
      (s) => (s.template.spec!.activeDeadlineSeconds = 5),
      ['FieldValueForbidden spec.template.spec.activeDeadlineSeconds'],
    ],
    [
      'Recreate with rollingUpdate',
      (s) => (s.strategy = { type: 'Recreate', rollingUpdate: {} }),
      ['FieldValueForbidden spec.strategy.rollingUpdate'],
    ],
    [
      'zero surge and zero unavailable',
      (s) => (s.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } }),
      ['FieldValueInvalid spec.strategy.rollingUpdate.maxUnavailable'],
    ],
    [
      'more than 100% unavailable and a bad percentage',
      (s) => (s.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 'x%', maxUnavailable: '120%' } }),
      [
        'FieldValueInvalid spec.strategy.rollingUpdate.maxUnavailable',
        'FieldValueInvalid spec.strategy.rollingUpdate.maxSurge',
      ],
    ],
    [
      'a progress deadline within minReadySeconds',
      (s) => {
        s.minReadySeconds = 10;
        s.progressDeadlineSeconds = 10;
      },
      ['FieldValueInvalid spec.progressDeadlineSeconds'],
    ],
  ])('%s', (_name, change, expected) => {
    expect(show(validateDeployment(deployment(change)))).toEqual(expected);
  });

  it('keeps the selector on update and bumps generation on spec changes', () => {
    const strategy = deploymentStrategy(DeploymentKind);
    const old = { ...deployment(), metadata: { name: 'd', generation: 1 } };
    const next = deployment((s) => {
      s.selector = { matchLabels: { app: 'a', x: 'y' } };
      s.template.metadata = { labels: { app: 'a', x: 'y' } };
    });
    strategy.prepareForUpdate(ctx, next as ApiObject, old as ApiObject);
    expect(next.metadata?.generation).toBe(2);
    expect(show(strategy.validateUpdate(ctx, next as ApiObject, old as ApiObject))).toEqual([
      'FieldValueInvalid spec.selector',
    ]);
  });
});
