/**
 * policy PodDisruptionBudget (v1beta1 and v1, which Kubernetes 1.21 both serve with the same fields) and the
 * policy/v1beta1 Eviction of `pods/eviction`.
 */
import { type Static, type TObject } from '@sinclair/typebox';

import { DeleteOptionsSchema, LabelSelectorSchema } from '../../meta/v1/types';
import { object, opt, ref, req, t } from '../../schema/schema';
import { defineKind, type Kind, OBJECT_HEAD, schemaPrefix } from '../../scheme/kind';
import { AGE_COLUMN } from '../../table/table';
import { ConditionSchema } from '../meta-condition';

function pdbSchemas(version: string) {
  const P = schemaPrefix('policy', version);
  const Spec = object(`${P}PodDisruptionBudgetSpec`, {
    minAvailable: opt(1, t.intOrString(), 'Pods that must still be available after an eviction.'),
    // policy/v1 replaces the selector in a strategic merge patch (+patchStrategy=replace); v1beta1 merges it.
    selector: opt(
      2,
      ref(LabelSelectorSchema, version === 'v1' ? { patchStrategy: 'replace' } : {}),
      'Label query over the pods of the budget.',
    ),
    maxUnavailable: opt(3, t.intOrString(), 'Pods that may be unavailable after an eviction.'),
  });
  const Status = object(`${P}PodDisruptionBudgetStatus`, {
    observedGeneration: opt(1, t.int64(), 'The generation observed when updating this status.'),
    disruptedPods: opt(2, t.map(t.time()), 'Pods whose eviction was processed but not yet observed.'),
    disruptionsAllowed: req(3, t.int32(), 'Number of pod disruptions currently allowed.'),
    currentHealthy: req(4, t.int32(), 'Current number of healthy pods.'),
    desiredHealthy: req(5, t.int32(), 'Minimum desired number of healthy pods.'),
    expectedPods: req(6, t.int32(), 'Total number of pods counted by this budget.'),
    conditions: opt(7, t.array(ref(ConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' })),
  });
  return object(
    `${P}PodDisruptionBudget`,
    {
      ...OBJECT_HEAD,
      spec: opt(2, ref(Spec), 'Desired behavior of the budget.'),
      status: opt(3, ref(Status), 'Most recently observed status of the budget.'),
    },
    { description: 'PodDisruptionBudget defines the maximum disruption that can be caused to a collection of pods.' },
  );
}

/** PodDisruptionBudget, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PodDisruptionBudgetSchema = pdbSchemas('v1');
/** PodDisruptionBudgetV1beta1, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PodDisruptionBudgetV1beta1Schema = pdbSchemas('v1beta1');
/** A PodDisruptionBudget object in its JSON form. */
export type PodDisruptionBudget = Static<typeof PodDisruptionBudgetSchema>;

function pdbKind<S extends TObject>(version: string, schema: S): Kind<S> {
  const view = (o: Static<S>): PodDisruptionBudget => o as unknown as PodDisruptionBudget;
  return defineKind({
    group: 'policy',
    version,
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    shortNames: ['pdb'],
    scope: 'Namespaced',
    subresources: { status: { verbs: ['get', 'patch', 'update'] } },
    schema,
    columns: [
      {
        name: 'Min Available',
        type: 'string',
        description: 'Pods that must still be available after an eviction.',
        cell: (o) => String(view(o).spec?.minAvailable ?? 'N/A'),
      },
      {
        name: 'Max Unavailable',
        type: 'string',
        description: 'Pods that may be unavailable after an eviction.',
        cell: (o) => String(view(o).spec?.maxUnavailable ?? 'N/A'),
      },
      {
        name: 'Allowed Disruptions',
        type: 'integer',
        description: 'Pod disruptions currently allowed.',
        cell: (o) => view(o).status?.disruptionsAllowed ?? 0,
      },
      AGE_COLUMN,
    ],
  });
}

/** The PodDisruptionBudget kind: discovery facts, defaults, printer columns and field selectors. */
export const PodDisruptionBudgetKind = pdbKind('v1', PodDisruptionBudgetSchema);
/** The PodDisruptionBudgetV1beta1 kind: discovery facts, defaults, printer columns and field selectors. */
export const PodDisruptionBudgetV1beta1Kind = pdbKind('v1beta1', PodDisruptionBudgetV1beta1Schema);

/** Eviction, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EvictionSchema = object(
  `${schemaPrefix('policy', 'v1beta1')}Eviction`,
  {
    ...OBJECT_HEAD,
    deleteOptions: opt(2, ref(DeleteOptionsSchema), 'Options for the deletion of the pod.'),
  },
  { description: 'Eviction evicts a pod from its node subject to certain policies and safety constraints.' },
);
/** A Eviction object in its JSON form. */
export type Eviction = Static<typeof EvictionSchema>;

/** The body of `pods/eviction`; served only as that subresource (no verbs of its own). */
export const EvictionKind = defineKind({
  group: 'policy',
  version: 'v1beta1',
  kind: 'Eviction',
  plural: 'evictions',
  scope: 'Namespaced',
  verbs: [],
  persisted: false,
  schema: EvictionSchema,
});
