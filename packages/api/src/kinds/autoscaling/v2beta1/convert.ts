/**
 * autoscaling/v2beta1 ↔ v2beta2 ↔ v1 HorizontalPodAutoscaler, as Kubernetes 1.21 converts them through its internal
 * type (`pkg/apis/autoscaling/v2beta1/conversion.go`): the metrics change shape (`../metrics.ts`), and the scaling
 * behaviour, which v2beta1 has no field for, is kept in the `autoscaling.alpha.kubernetes.io/behavior` annotation.
 * v2beta1 ↔ v1 goes through v2beta2, as 1.21 goes through the internal type, so v1's annotations are those a v2beta2
 * client leaves. Every function returns a new object and never fails: an annotation that is not JSON is ignored.
 */
import { clean, metricFromV2beta1, metricStatusFromV2beta1, metricStatusToV2beta1, metricToV2beta1 } from '../metrics';
import { type HorizontalPodAutoscaler } from '../v1/scale';
import { HPA_ANNOTATIONS, hpaToV1, hpaToV2beta2, parseAnnotation, withAnnotations } from '../v2beta2/convert';
import { type HorizontalPodAutoscalerV2beta2 } from '../v2beta2/hpa';
import { type HorizontalPodAutoscalerV2beta1 } from './hpa';

type V2 = HorizontalPodAutoscalerV2beta2;
type V1b = HorizontalPodAutoscalerV2beta1;
type Json = Record<string, unknown>;

/** The spec and status of either version converted with the metric conversions given (behaviour aside). */
function convertBody(
  spec: V2['spec'] | V1b['spec'],
  status: V2['status'] | V1b['status'],
  metric: (m: object) => Json,
  metricStatus: (m: object) => Json,
): { spec?: Json; status?: Json } {
  return {
    ...(spec && {
      spec: clean({
        scaleTargetRef: spec.scaleTargetRef,
        minReplicas: spec.minReplicas,
        maxReplicas: spec.maxReplicas,
        metrics: (spec.metrics as object[] | undefined)?.map((m) => metric(m)),
      }),
    }),
    ...(status && {
      status: clean({
        ...status,
        currentMetrics: (status.currentMetrics as object[] | undefined)?.map((m) => metricStatus(m)),
      }),
    }),
  };
}

/** A v2beta1 autoscaler as v2beta2, its behaviour read back from the annotation. */
export function hpaV2beta1ToV2beta2(obj: V1b): V2 {
  const { spec, status, ...rest } = structuredClone(obj);
  const annotations: Record<string, string> = { ...(rest.metadata?.annotations ?? {}) };
  const behavior = parseAnnotation(annotations[HPA_ANNOTATIONS.behavior]);
  delete annotations[HPA_ANNOTATIONS.behavior];
  const body = convertBody(spec, status, metricFromV2beta1, metricStatusFromV2beta1);
  if (body.spec && behavior && !Array.isArray(behavior)) body.spec.behavior = behavior;
  return withAnnotations(
    { ...rest, apiVersion: 'autoscaling/v2beta2', kind: 'HorizontalPodAutoscaler', ...body } as V2,
    annotations,
  );
}

/** A v2beta2 autoscaler as v2beta1, its behaviour kept in the annotation. */
export function hpaV2beta2ToV2beta1(obj: V2): V1b {
  const { spec, status, ...rest } = structuredClone(obj);
  const annotations: Record<string, string> = { ...(rest.metadata?.annotations ?? {}) };
  delete annotations[HPA_ANNOTATIONS.behavior];
  if (spec?.behavior) annotations[HPA_ANNOTATIONS.behavior] = JSON.stringify(spec.behavior);
  const body = convertBody(spec, status, metricToV2beta1, metricStatusToV2beta1);
  return withAnnotations(
    { ...rest, apiVersion: 'autoscaling/v2beta1', kind: 'HorizontalPodAutoscaler', ...body } as V1b,
    annotations,
  );
}

/** A v2beta1 autoscaler as autoscaling/v1 (the stored version), what v1 cannot hold in its annotations. */
export function hpaV2beta1ToV1(obj: V1b): HorizontalPodAutoscaler {
  return hpaToV1(hpaV2beta1ToV2beta2(obj));
}

/** An autoscaling/v1 autoscaler as v2beta1, its annotations read back. */
export function hpaV1ToV2beta1(obj: HorizontalPodAutoscaler): V1b {
  return hpaV2beta2ToV2beta1(hpaToV2beta2(obj));
}
