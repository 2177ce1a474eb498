/**
 * The discovery priorities of the built-in group versions (model: kube-apiserver 1.21
 * `cmd/kube-apiserver/app/aggregator.go` `apiVersionPriorities`, groups renamed `.platform`): the
 * groupPriorityMinimum and versionPriority of the local APIServices autoregistration keeps, and so the order of
 * `/apis`. A group version missing here gets {@link DEFAULT_PRIORITY}.
 */

/** The priorities of one group version. */
export interface Priority {
  group: number;
  version: number;
}

const TABLE: Record<string, Priority> = {
  v1: { group: 18000, version: 1 },
  'apiregistration.platform/v1': { group: 18000, version: 15 },
  'apiregistration.platform/v1beta1': { group: 18000, version: 9 },
  'apps/v1': { group: 17800, version: 15 },
  'events.platform/v1': { group: 17750, version: 15 },
  'events.platform/v1beta1': { group: 17750, version: 5 },
  'authentication.platform/v1': { group: 17700, version: 15 },
  'authentication.platform/v1beta1': { group: 17700, version: 9 },
  'authorization.platform/v1': { group: 17600, version: 15 },
  'authorization.platform/v1beta1': { group: 17600, version: 9 },
  'autoscaling/v1': { group: 17500, version: 15 },
  'autoscaling/v2beta1': { group: 17500, version: 9 },
  'autoscaling/v2beta2': { group: 17500, version: 1 },
  'batch/v1': { group: 17400, version: 15 },
  'batch/v1beta1': { group: 17400, version: 9 },
  'certificates.platform/v1': { group: 17300, version: 15 },
  'certificates.platform/v1beta1': { group: 17300, version: 9 },
  'networking.platform/v1': { group: 17200, version: 15 },
  'networking.platform/v1beta1': { group: 17200, version: 9 },
  'extensions/v1beta1': { group: 17150, version: 1 },
  'policy/v1': { group: 17100, version: 15 },
  'policy/v1beta1': { group: 17100, version: 9 },
  'rbac.authorization.platform/v1': { group: 17000, version: 15 },
  'rbac.authorization.platform/v1beta1': { group: 17000, version: 12 },
  'storage.platform/v1': { group: 16800, version: 15 },
  'storage.platform/v1beta1': { group: 16800, version: 9 },
  'apiextensions.platform/v1': { group: 16700, version: 15 },
  'apiextensions.platform/v1beta1': { group: 16700, version: 9 },
  'admissionregistration.platform/v1': { group: 16700, version: 15 },
  'admissionregistration.platform/v1beta1': { group: 16700, version: 12 },
  'scheduling.platform/v1': { group: 16600, version: 15 },
  'scheduling.platform/v1beta1': { group: 16600, version: 12 },
  'coordination.platform/v1': { group: 16500, version: 15 },
  'coordination.platform/v1beta1': { group: 16500, version: 9 },
  'node.platform/v1': { group: 16300, version: 15 },
  'node.platform/v1beta1': { group: 16300, version: 9 },
  'discovery.platform/v1': { group: 16200, version: 15 },
  'discovery.platform/v1beta1': { group: 16200, version: 12 },
  'flowcontrol.apiserver.platform/v1beta1': { group: 16100, version: 12 },
  'flowcontrol.apiserver.platform/v1alpha1': { group: 16100, version: 9 },
};

/** The priorities of a group version served locally that the table does not know (Kubernetes' advice for new ones). */
export const DEFAULT_PRIORITY: Priority = { group: 1000, version: 9 };

/** The priorities of the custom resources' group versions (crdRegistrationController). */
export const CRD_PRIORITY: Priority = { group: 1000, version: 100 };

/** The priorities of a built-in group version (`''` is the core group). */
export function builtinPriority(group: string, version: string): Priority {
  return TABLE[group ? `${group}/${version}` : version] ?? DEFAULT_PRIORITY;
}
