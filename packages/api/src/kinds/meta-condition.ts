/**
 * `meta/v1` Condition: the standard condition type of newer APIs (Service status, PodDisruptionBudget status).
 * TODO(#4): belongs in meta/v1/types.ts next to the other meta types; it lives here until the lead moves it, under
 * the meta schema id so that moving it changes nothing on the wire or in OpenAPI.
 */
import { type Static } from '@sinclair/typebox';

import { object, opt, req, t } from '../schema/schema';

/** metav1.Condition, with the field numbers of Kubernetes' `generated.proto`. */
export const ConditionSchema = object('io.platform.meta.v1.Condition', {
  type: req(1, t.string(), 'Type of condition in CamelCase.'),
  status: req(2, t.enumOf(['True', 'False', 'Unknown']), 'Status of the condition: True, False or Unknown.'),
  observedGeneration: opt(3, t.int64(), 'The .metadata.generation the condition was set based upon.'),
  lastTransitionTime: req(4, t.time(), 'Last time the condition transitioned from one status to another.'),
  reason: req(5, t.string(), "Programmatic identifier of the reason for the condition's last transition."),
  message: req(6, t.string(), 'Human readable message about the transition.'),
});
/** A Condition object in its JSON form. */
export type Condition = Static<typeof ConditionSchema>;
