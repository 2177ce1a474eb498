/**
 * The Pod strategies (model: Kubernetes 1.21 `pkg/registry/core/pod/strategy.go`): on create the status is reset to
 * `Pending` with the pod's QoS class; updates may change only images, `activeDeadlineSeconds` and tolerations
 * (additions) of the spec; the status subresource changes only status; deletion is graceful for pods bound to a
 * node that have not finished.
 */
import {
  type ApiObject,
  type FieldError,
  FieldPath,
  field,
  isDNS1123Subdomain,
  type Kind,
  type Pod,
} from '@platform/api';

import { defaultStrategy, statusStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type DeleteStrategy, type UpdateStrategy } from '../../rest/rest';
import { compareQuantities, parseQuantityValue } from './quantity';
import { validatePodSpec, validatePodSpecUpdate } from './validation';

/** The grace period of a pod that asks for none (Kubernetes' `DefaultTerminationGracePeriodSeconds`). */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

/**
 * The QoS class of a pod (model: `qos.GetPodQOS`): BestEffort without any request or limit of cpu or memory,
 * Guaranteed when every container limits cpu and memory and requests equal limits, Burstable otherwise.
 */
export function podQOSClass(pod: Pod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const requests = c.resources?.requests ?? {};
    const limits = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      const req = requests[r] !== undefined ? parseQuantityValue(requests[r]) : undefined;
      const lim = limits[r] !== undefined ? parseQuantityValue(limits[r]) : undefined;
      if ((req && !req.isZero()) || (lim && !lim.isZero())) any = true;
      if (!lim || lim.isZero()) guaranteed = false;
      else if (req && compareQuantities(req, lim) !== 0) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** Validation of a new pod (metadata is validated by the store). */
export function validatePod(pod: Pod): FieldError[] {
  return validatePodSpec(pod.spec, new FieldPath('spec'));
}

/** Validation of a pod update: the new spec is valid, and only the mutable fields changed. */
export function validatePodUpdate(pod: Pod, old: Pod): FieldError[] {
  const spec = new FieldPath('spec');
  return [...validatePodSpec(pod.spec, spec), ...validatePodSpecUpdate(pod.spec ?? {}, old.spec ?? {}, spec)];
}

/** The strategy of `pods`. */
export function podStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    prepareForCreate: (_ctx, obj) => {
      const pod = obj as Pod;
      pod.status = { phase: 'Pending', qosClass: podQOSClass(pod) };
    },
    validate: (_ctx, obj) => validatePod(obj as Pod),
    validateUpdate: (_ctx, obj, old) => validatePodUpdate(obj as Pod, old as Pod),
  });
}

/** The strategy of `pods/status`: only status changes; `spec.nodeName` is the binding's, not the status'. */
export function podStatusStrategy(): UpdateStrategy {
  return statusStrategy({
    validateUpdate: (_ctx, obj) => {
      const pod = obj as Pod;
      const nominated = pod.status?.nominatedNodeName;
      const path = new FieldPath('status', 'nominatedNodeName');
      const errs: FieldError[] = nominated ? field.invalidEach(path, nominated, isDNS1123Subdomain(nominated)) : [];
      return errs;
    },
  });
}

/**
 * Graceful deletion of pods (model: the pod strategy's `CheckGracefulDelete`): a pod not yet bound to a node, or
 * already finished, goes at once; otherwise it stays terminating for the requested grace period (by default its
 * `terminationGracePeriodSeconds`) for its node agent to stop it.
 */
export const POD_DELETE_STRATEGY: DeleteStrategy = {
  gracePeriod(_ctx, obj: ApiObject, requested) {
    const pod = obj as Pod;
    if (!pod.spec?.nodeName) return 0;
    if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') return 0;
    const period = requested ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
    return Math.max(0, period);
  },
};
