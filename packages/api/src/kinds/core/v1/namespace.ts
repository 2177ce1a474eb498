/** core/v1 Namespace: a scope for names. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';

const P = schemaPrefix('', 'v1');

/** NamespaceSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NamespaceSpecSchema = object(`${P}NamespaceSpec`, {
  finalizers: opt(1, t.array(t.string()), 'Values that must be empty before the namespace is removed.'),
});

/** NamespaceCondition, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NamespaceConditionSchema = object(`${P}NamespaceCondition`, {
  type: req(1, t.string()),
  status: req(2, t.enumOf(['True', 'False', 'Unknown'])),
  lastTransitionTime: opt(4, t.time()),
  reason: opt(5, t.string()),
  message: opt(6, t.string()),
});

/** NamespaceStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NamespaceStatusSchema = object(`${P}NamespaceStatus`, {
  phase: opt(1, t.enumOf(['Active', 'Terminating']), 'Current lifecycle phase of the namespace.'),
  conditions: opt(
    2,
    t.array(ref(NamespaceConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' }),
    'Latest observations of the namespace state.',
  ),
});

/** Namespace, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NamespaceSchema = object(
  `${P}Namespace`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(NamespaceSpecSchema), 'Behavior of the namespace.'),
    status: opt(3, ref(NamespaceStatusSchema), 'Current status of the namespace. Read-only.'),
  },
  { description: 'Namespace provides a scope for Names. Use of multiple namespaces is optional.' },
);
/** A Namespace object in its JSON form. */
export type Namespace = Static<typeof NamespaceSchema>;

/** The Namespace kind: discovery facts, defaults, printer columns and field selectors. */
export const NamespaceKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  shortNames: ['ns'],
  scope: 'Cluster',
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: {
    status: { verbs: ['get', 'patch', 'update'] },
    finalize: { verbs: ['update'] },
  },
  schema: NamespaceSchema,
  defaults(ns) {
    const status = (ns.status ??= {});
    status.phase ||= 'Active';
  },
  columns: [
    {
      name: 'Status',
      type: 'string',
      description: 'The status of the namespace.',
      cell: (o) => o.status?.phase ?? '',
    },
    AGE_COLUMN,
  ],
  fields: { 'status.phase': (o) => o.status?.phase ?? '' },
});
