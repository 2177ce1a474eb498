import { SAMPLES } from '../../testing/samples';
import { metricFromV2beta1, metricStatusFromV2beta1, metricStatusToV2beta1, metricToV2beta1 } from '../metrics';
import { HPA_ANNOTATIONS, hpaToV1, hpaToV2beta2 } from '../v2beta2/convert';
import { type HorizontalPodAutoscalerV2beta2 } from '../v2beta2/hpa';
import { hpaV1ToV2beta1, hpaV2beta1ToV1, hpaV2beta1ToV2beta2, hpaV2beta2ToV2beta1 } from './convert';
import { type HorizontalPodAutoscalerV2beta1, HorizontalPodAutoscalerV2beta1Kind } from './hpa';

const sample = (): HorizontalPodAutoscalerV2beta1 => ({
  apiVersion: 'autoscaling/v2beta1',
  kind: 'HorizontalPodAutoscaler',
  ...structuredClone(SAMPLES['autoscaling/v2beta1/HorizontalPodAutoscaler']),
});

const v2beta2Sample = (): HorizontalPodAutoscalerV2beta2 => ({
  apiVersion: 'autoscaling/v2beta2',
  kind: 'HorizontalPodAutoscaler',
  ...structuredClone(SAMPLES['autoscaling/v2beta2/HorizontalPodAutoscaler']),
});

describe('the metric shapes', () => {
  it.each([
    [
      'a resource utilization',
      { type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: 50 } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
    ],
    [
      'a resource value',
      { type: 'Resource', resource: { name: 'memory', targetAverageValue: '1Gi' } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } },
    ],
    [
      'an object value beside an average (both kept, as 1.21)',
      {
        type: 'Object',
        object: { target: { kind: 'Ingress', name: 'web' }, metricName: 'rps', targetValue: '10', averageValue: '2' },
      },
      {
        type: 'Object',
        object: {
          describedObject: { kind: 'Ingress', name: 'web' },
          metric: { name: 'rps' },
          target: { type: 'AverageValue', value: '10', averageValue: '2' },
        },
      },
    ],
    [
      'an external value with its selector',
      {
        type: 'External',
        external: { metricName: 'queue', metricSelector: { matchLabels: { q: 'a' } }, targetValue: '30' },
      },
      {
        type: 'External',
        external: {
          metric: { name: 'queue', selector: { matchLabels: { q: 'a' } } },
          target: { type: 'Value', value: '30' },
        },
      },
    ],
    [
      'a container resource',
      { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'web', targetAverageUtilization: 60 } },
      {
        type: 'ContainerResource',
        containerResource: {
          name: 'cpu',
          container: 'web',
          target: { type: 'Utilization', averageUtilization: 60 },
        },
      },
    ],
  ])('converts %s both ways', (_name, beta1, beta2) => {
    expect(metricFromV2beta1(beta1)).toEqual(beta2);
    expect(metricToV2beta1(beta2)).toEqual(beta1);
  });

  it('converts statuses with the current… names', () => {
    const beta1 = {
      type: 'Pods',
      pods: { metricName: 'qps', selector: { matchLabels: { a: 'b' } }, currentAverageValue: '7' },
    };
    const beta2 = {
      type: 'Pods',
      pods: { metric: { name: 'qps', selector: { matchLabels: { a: 'b' } } }, current: { averageValue: '7' } },
    };
    expect(metricStatusFromV2beta1(beta1)).toEqual(beta2);
    expect(metricStatusToV2beta1(beta2)).toEqual(beta1);
  });
});

describe('autoscaling/v2beta1 ↔ v2beta2 ↔ v1', () => {
  it('stores the v2beta1 sample as v1 with the annotations 1.21 writes', () => {
    const v1 = hpaV2beta1ToV1(sample());
    expect(v1.apiVersion).toBe('autoscaling/v1');
    expect(v1.spec?.targetCPUUtilizationPercentage).toBe(70);
    expect(v1.status?.currentCPUUtilizationPercentage).toBe(85);
    const a = v1.metadata?.annotations ?? {};
    // v1's annotations hold the metrics in v2beta1's own shape: the same objects, the CPU target aside.
    expect(JSON.parse(a[HPA_ANNOTATIONS.metrics]!)).toEqual(sample().spec!.metrics!.slice(0, 4));
    expect(JSON.parse(a[HPA_ANNOTATIONS.currentMetrics]!)).toEqual(sample().status!.currentMetrics);
    expect(JSON.parse(a[HPA_ANNOTATIONS.conditions]!)).toEqual(sample().status!.conditions);
    expect(a[HPA_ANNOTATIONS.behavior]).toBeUndefined();
    expect(a['example.com/note']).toBe('sample');
  });

  it('reads the v2beta1 sample back from v1 unchanged (its CPU target is last, where v1 puts it)', () => {
    expect(hpaV1ToV2beta1(hpaV2beta1ToV1(sample()))).toEqual(sample());
    expect(hpaV2beta2ToV2beta1(hpaV2beta1ToV2beta2(sample()))).toEqual(sample());
  });

  it('moves a CPU utilization target last, as 1.21 reads v1', () => {
    const first = sample();
    first.spec!.metrics = [first.spec!.metrics![4]!, ...first.spec!.metrics!.slice(0, 4)];
    expect(hpaV1ToV2beta1(hpaV2beta1ToV1(first)).spec?.metrics).toEqual(sample().spec?.metrics);
  });

  it('keeps a v2beta2 behaviour in an annotation of v2beta1 and gets it back', () => {
    const beta2 = v2beta2Sample();
    const beta1 = hpaV2beta2ToV2beta1(beta2);
    expect(JSON.parse(beta1.metadata!.annotations![HPA_ANNOTATIONS.behavior]!)).toEqual(beta2.spec!.behavior);
    expect(hpaV2beta1ToV2beta2(beta1)).toEqual(beta2);
    // and through v1, which a v2beta1 client writes back: the v2beta2 reader still sees the behaviour.
    expect(hpaToV2beta2(hpaV2beta1ToV1(hpaV1ToV2beta1(hpaToV1(beta2)))).spec?.behavior).toEqual(beta2.spec!.behavior);
  });

  it('reads a plain v1 autoscaler in v2beta1 (its CPU fields as metrics)', () => {
    const v1 = hpaV1ToV2beta1({
      metadata: { name: 'h' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3, targetCPUUtilizationPercentage: 50 },
      status: { currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 20 },
    });
    expect(v1).toEqual({
      apiVersion: 'autoscaling/v2beta1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        maxReplicas: 3,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: 50 } }],
      },
      status: {
        currentReplicas: 1,
        desiredReplicas: 1,
        currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 20 } }],
      },
    });
  });

  it('defaults as 1.21 does: one replica at least, CPU at 80% without metrics', () => {
    const hpa: HorizontalPodAutoscalerV2beta1 = {
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 },
    };
    HorizontalPodAutoscalerV2beta1Kind.spec.defaults!(hpa);
    expect(hpa.spec).toEqual({
      scaleTargetRef: { kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 3,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: 80 } }],
    });
  });
});
