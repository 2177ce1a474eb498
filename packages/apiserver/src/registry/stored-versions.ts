/**
 * Resources whose versions differ in shape, stored in one version (model: the storage versions of Kubernetes 1.21's
 * `pkg/kubeapiserver/default_storage_factory_builder.go`): every Ingress, whichever of networking.platform/v1,
 * networking.platform/v1beta1 or extensions/v1beta1 wrote it, is stored as networking.platform/v1 and converted on
 * the way out, so each version reads every Ingress. Likewise every HorizontalPodAutoscaler is stored as
 * autoscaling/v1, an autoscaling/v2beta1 or v2beta2 one keeping what v1 cannot hold in v1's annotations, as 1.21
 * does.
 */
import {
  type ApiObject,
  type HorizontalPodAutoscaler,
  type HorizontalPodAutoscalerV2beta1,
  type HorizontalPodAutoscalerV2beta2,
  hpaToV1,
  hpaToV2beta2,
  hpaV1ToV2beta1,
  hpaV2beta1ToV1,
  type Ingress,
  ingressToV1,
  ingressToV1beta1,
  type IngressV1beta1,
  type Kind,
} from '@platform/api';

import { type StorageConversion } from '../storage/converting';

const INGRESS_STORAGE_VERSION = 'networking.platform/v1';

/** The conversion between a kind's version and its resource's storage version; undefined when they are the same. */
export function storedVersionConversion(kind: Kind): StorageConversion | undefined {
  if (kind.plural === 'ingresses' && kind.apiVersion !== INGRESS_STORAGE_VERSION) {
    return {
      toStored: (o) => ingressToV1(o as IngressV1beta1) as ApiObject,
      fromStored: (o) =>
        o.apiVersion === INGRESS_STORAGE_VERSION ? (ingressToV1beta1(o as Ingress, kind.apiVersion) as ApiObject) : o,
    };
  }
  if (kind.plural === 'horizontalpodautoscalers' && kind.apiVersion === 'autoscaling/v2beta2') {
    return {
      toStored: (o) => hpaToV1(o as HorizontalPodAutoscalerV2beta2) as ApiObject,
      fromStored: (o) =>
        o.apiVersion === 'autoscaling/v1' ? (hpaToV2beta2(o as HorizontalPodAutoscaler) as ApiObject) : o,
    };
  }
  if (kind.plural === 'horizontalpodautoscalers' && kind.apiVersion === 'autoscaling/v2beta1') {
    return {
      toStored: (o) => hpaV2beta1ToV1(o as HorizontalPodAutoscalerV2beta1) as ApiObject,
      fromStored: (o) =>
        o.apiVersion === 'autoscaling/v1' ? (hpaV1ToV2beta1(o as HorizontalPodAutoscaler) as ApiObject) : o,
    };
  }
  return undefined;
}
