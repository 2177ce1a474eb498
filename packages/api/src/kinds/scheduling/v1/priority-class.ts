/** scheduling.platform/v1 PriorityClass: a name for a pod priority value. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';

const P = schemaPrefix('scheduling.platform', 'v1');

/** PriorityClass, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PriorityClassSchema = object(
  `${P}PriorityClass`,
  {
    ...OBJECT_HEAD,
    value: req(2, t.int32(), 'The priority of pods naming this class.'),
    globalDefault: opt(3, t.bool(), 'This class is the priority of pods without a priorityClassName.'),
    description: opt(4, t.string(), 'When this priority class should be used.'),
    preemptionPolicy: opt(
      5,
      ptr(t.enumOf(['Never', 'PreemptLowerPriority'])),
      'Whether pods of this class preempt lower-priority pods. Defaults to PreemptLowerPriority.',
    ),
  },
  { description: 'PriorityClass defines mapping from a priority class name to the priority integer value.' },
);
/** A PriorityClass object in its JSON form. */
export type PriorityClass = Static<typeof PriorityClassSchema>;

/** The PriorityClass kind: discovery facts, defaults, printer columns and field selectors. */
export const PriorityClassKind = defineKind({
  group: 'scheduling.platform',
  version: 'v1',
  kind: 'PriorityClass',
  plural: 'priorityclasses',
  shortNames: ['pc'],
  scope: 'Cluster',
  schema: PriorityClassSchema,
  defaults(pc) {
    pc.preemptionPolicy ??= 'PreemptLowerPriority';
  },
  columns: [
    { name: 'Value', type: 'integer', description: 'The priority value.', cell: (o) => o.value },
    {
      name: 'Global-Default',
      type: 'boolean',
      description: 'Whether this class is the global default.',
      cell: (o) => o.globalDefault ?? false,
    },
    AGE_COLUMN,
  ],
});
