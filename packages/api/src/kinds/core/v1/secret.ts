/** core/v1 Secret: confidential data as key-value pairs. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';

const P = schemaPrefix('', 'v1');

/** Secret, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SecretSchema = object(
  `${P}Secret`,
  {
    ...OBJECT_HEAD,
    immutable: opt(5, ptr(t.bool()), 'If true, only metadata can be modified.'),
    data: opt(2, t.map(t.bytes()), 'Secret data (base64 in JSON).'),
    stringData: opt(4, t.map(t.string()), 'Write-only convenience: merged into data on write.'),
    type: opt(3, t.string(), 'Used to facilitate programmatic handling of secret data. Defaults to Opaque.'),
  },
  { description: 'Secret holds secret data of a certain type.' },
);
/** A Secret object in its JSON form. */
export type Secret = Static<typeof SecretSchema>;

/** The Secret kind: discovery facts, defaults, printer columns and field selectors. */
export const SecretKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  scope: 'Namespaced',
  schema: SecretSchema,
  defaults(s) {
    s.type ||= 'Opaque';
  },
  columns: [
    { name: 'Type', type: 'string', description: 'The type of the secret.', cell: (o) => o.type ?? '' },
    {
      name: 'Data',
      type: 'integer',
      description: 'Number of data entries.',
      cell: (o) => Object.keys(o.data ?? {}).length,
    },
    AGE_COLUMN,
  ],
  fields: { type: (o) => o.type ?? '' },
});
