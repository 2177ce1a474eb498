/** core/v1 ConfigMap: non-confidential configuration data as key-value pairs. */
import { type Static } from '@sinclair/typebox';

import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { object, opt, ptr, t } from '../../../schema/schema';
import { age } from '../../../table/table';

const P = schemaPrefix('', 'v1');

/** ConfigMap, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ConfigMapSchema = object(
  `${P}ConfigMap`,
  {
    ...OBJECT_HEAD,
    immutable: opt(4, ptr(t.bool()), 'If true, only metadata can be modified.'),
    data: opt(2, t.map(t.string()), 'Configuration data (UTF-8 strings).'),
    binaryData: opt(3, t.map(t.bytes()), 'Binary configuration data (base64 in JSON).'),
  },
  { description: 'ConfigMap holds configuration data for pods to consume.' },
);
/** A ConfigMap object in its JSON form. */
export type ConfigMap = Static<typeof ConfigMapSchema>;

/** The ConfigMap kind: discovery facts, defaults, printer columns and field selectors. */
export const ConfigMapKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  shortNames: ['cm'],
  scope: 'Namespaced',
  schema: ConfigMapSchema,
  columns: [
    {
      name: 'Data',
      type: 'integer',
      description: 'Number of data entries.',
      cell: (o) => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length,
    },
    {
      name: 'Age',
      type: 'string',
      description: 'Time since creation.',
      cell: (o, now) => age(o.metadata?.creationTimestamp, now),
    },
  ],
});
