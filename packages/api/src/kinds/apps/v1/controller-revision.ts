/** apps/v1 ControllerRevision: an immutable snapshot of a workload's state (StatefulSet and DaemonSet history). */
import { type Static } from '@sinclair/typebox';

import { object, opt, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { APPS_V1 } from './types';

/** ControllerRevision, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ControllerRevisionSchema = object(
  `${APPS_V1}ControllerRevision`,
  {
    ...OBJECT_HEAD,
    data: opt(2, t.raw(), 'The serialized representation of the state.'),
    revision: req(3, t.int64(), 'The revision of the state represented by data.'),
  },
  { description: 'ControllerRevision implements an immutable snapshot of state data.' },
);
/** A ControllerRevision object in its JSON form. */
export type ControllerRevision = Static<typeof ControllerRevisionSchema>;

/** `statefulset.apps/web`: the controlling owner of an object, `<none>` without one. */
function controllerOf(o: ControllerRevision): string {
  const owner = o.metadata?.ownerReferences?.find((r) => r.controller);
  if (!owner) return '<none>';
  const slash = owner.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : owner.apiVersion.slice(0, slash);
  const kind = group ? `${owner.kind}.${group}` : owner.kind;
  return `${kind.toLowerCase()}/${owner.name}`;
}

/** The ControllerRevision kind: discovery facts, defaults, printer columns and field selectors. */
export const ControllerRevisionKind = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'ControllerRevision',
  plural: 'controllerrevisions',
  scope: 'Namespaced',
  schema: ControllerRevisionSchema,
  columns: [
    { name: 'Controller', type: 'string', description: 'Controller of the revision.', cell: (o) => controllerOf(o) },
    { name: 'Revision', type: 'integer', description: 'Revision number.', cell: (o) => o.revision },
    AGE_COLUMN,
  ],
});
