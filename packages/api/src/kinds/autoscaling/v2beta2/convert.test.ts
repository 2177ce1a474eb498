import { SAMPLES } from '../../testing/samples';
import { type HorizontalPodAutoscaler } from '../v1/scale';
import { HPA_ANNOTATIONS, hpaToV1, hpaToV2beta2 } from './convert';
import { type HorizontalPodAutoscalerV2beta2 } from './hpa';

const sample = (): HorizontalPodAutoscalerV2beta2 => ({
  apiVersion: 'autoscaling/v2beta2',
  kind: 'HorizontalPodAutoscaler',
  ...structuredClone(SAMPLES['autoscaling/v2beta2/HorizontalPodAutoscaler']),
});

describe('autoscaling/v2beta2 ↔ v1', () => {
  it('keeps the CPU target in v1 fields and the rest in annotations, as 1.21 does', () => {
    const v1 = hpaToV1(sample());
    expect(v1.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 10,
      targetCPUUtilizationPercentage: 70,
    });
    expect(v1.status?.currentCPUUtilizationPercentage).toBe(85);
    const a = v1.metadata?.annotations ?? {};
    expect(JSON.parse(a[HPA_ANNOTATIONS.metrics]!)).toEqual([
      {
        type: 'Pods',
        pods: { metricName: 'qps', selector: { matchLabels: { app: 'web' } }, targetAverageValue: '100' },
      },
      { type: 'External', external: { metricName: 'queue', targetValue: '30' } },
    ]);
    // Every current metric, the CPU one too, so its raw value survives (1.21).
    expect(JSON.parse(a[HPA_ANNOTATIONS.currentMetrics]!)).toEqual([
      { type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 85, currentAverageValue: '425m' } },
      { type: 'Pods', pods: { metricName: 'qps', currentAverageValue: '120' } },
    ]);
    expect(JSON.parse(a[HPA_ANNOTATIONS.conditions]!)[0].type).toBe('AbleToScale');
    expect(a['example.com/note']).toBe('sample');
  });

  it('reads a v1 autoscaler back (the CPU target last, the annotations gone)', () => {
    const back = hpaToV2beta2(hpaToV1(sample()));
    const want = sample();
    const [cpu, ...others] = want.spec!.metrics!;
    want.spec!.metrics = [...others, cpu!];
    expect(back).toEqual(want);
  });

  it("reads the CPU status from v1's field only without the current-metrics annotation", () => {
    const v1 = hpaToV1(sample());
    delete v1.metadata!.annotations![HPA_ANNOTATIONS.currentMetrics];
    expect(hpaToV2beta2(v1).status?.currentMetrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 85 } } },
    ]);
  });

  it("reads a plain v1 autoscaler with v1's implicit CPU target and ignores an annotation that is not JSON", () => {
    const v1: HorizontalPodAutoscaler = {
      metadata: { name: 'h', annotations: { [HPA_ANNOTATIONS.metrics]: '{not json' } },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 },
    };
    expect(hpaToV2beta2(v1)).toEqual({
      apiVersion: 'autoscaling/v2beta2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        maxReplicas: 3,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
        ],
      },
    });
  });
});
