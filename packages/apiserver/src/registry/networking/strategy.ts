/**
 * The strategies of networking.platform's kinds (model: Kubernetes 1.21 `pkg/registry/networking`): Ingress (every
 * version validated in its v1 form; status through its subresource), IngressClass and NetworkPolicy.
 */
import {
  type ApiObject,
  type Ingress,
  type IngressClass,
  ingressToV1,
  type IngressV1beta1,
  type Kind,
  type NetworkPolicy,
} from '@platform/api';

import { defaultStrategy } from '../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../rest/rest';
import {
  validateIngress,
  validateIngressClass,
  validateIngressClassUpdate,
  validateIngressCreate,
  validateNetworkPolicy,
} from './validation';

/** The v1 form of an Ingress of any served version. */
function asV1(kind: Kind, obj: unknown): Ingress {
  return kind.version === 'v1' ? (obj as Ingress) : ingressToV1(obj as IngressV1beta1);
}

/** The strategy of `ingresses`, in every group and version that serves them. */
export function ingressStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateIngressCreate(asV1(kind, obj)),
    validateUpdate: (_ctx, obj) => validateIngress(asV1(kind, obj)),
  });
}

/**
 * Generation of a kind without a status subresource that still counts its spec changes (IngressClass,
 * NetworkPolicy in 1.21): 1 on create, one more whenever `spec` changes.
 */
const SPEC_GENERATION = {
  prepareForCreate(_ctx: unknown, obj: ApiObject): void {
    if (obj.metadata) obj.metadata.generation = 1;
  },
  prepareForUpdate(_ctx: unknown, obj: ApiObject, old: ApiObject): void {
    if (!obj.metadata) return;
    const generation = old.metadata?.generation ?? 1;
    const changed =
      JSON.stringify((obj as { spec?: unknown }).spec) !== JSON.stringify((old as { spec?: unknown }).spec);
    obj.metadata.generation = changed ? generation + 1 : generation;
  },
};

/** The strategy of `ingressclasses`. */
export function ingressClassStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    ...SPEC_GENERATION,
    validate: (_ctx, obj) => validateIngressClass(obj as IngressClass),
    validateUpdate: (_ctx, obj, old) => validateIngressClassUpdate(obj as IngressClass, old as IngressClass),
  });
}

/** The strategy of `networkpolicies`: generation is bumped on every spec change, as in 1.21. */
export function networkPolicyStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    ...SPEC_GENERATION,
    validate: (_ctx, obj) => validateNetworkPolicy(obj as NetworkPolicy),
    validateUpdate: (_ctx, obj) => validateNetworkPolicy(obj as NetworkPolicy),
  });
}
