/** core/v1 ResourceQuota: aggregate resource limits of a namespace. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { ScopeSelectorSchema } from './types';

const P = schemaPrefix('', 'v1');

/** ResourceQuotaSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ResourceQuotaSpecSchema = object(`${P}ResourceQuotaSpec`, {
  hard: opt(1, t.map(t.quantity()), 'Desired hard limits for each named resource.'),
  scopes: opt(2, t.array(t.string()), 'Filters every tracked object must match.'),
  scopeSelector: opt(3, ref(ScopeSelectorSchema), 'Filters as scope selector requirements.'),
});

/** ResourceQuotaStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ResourceQuotaStatusSchema = object(`${P}ResourceQuotaStatus`, {
  hard: opt(1, t.map(t.quantity()), 'Enforced hard limits.'),
  used: opt(2, t.map(t.quantity()), 'Observed total usage in the namespace.'),
});

/** ResourceQuota, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ResourceQuotaSchema = object(
  `${P}ResourceQuota`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(ResourceQuotaSpecSchema), 'The desired quota.'),
    status: opt(3, ref(ResourceQuotaStatusSchema), 'The enforced quota and its usage.'),
  },
  { description: 'ResourceQuota sets aggregate quota restrictions enforced per namespace.' },
);
/** A ResourceQuota object in its JSON form. */
export type ResourceQuota = Static<typeof ResourceQuotaSchema>;

/** The Request and Limit columns: `resource: used/hard` of status.hard, `limits.*` in the second. */
function usage(quota: ResourceQuota, limits: boolean): string {
  const hard = quota.status?.hard ?? {};
  const used = quota.status?.used ?? {};
  return Object.keys(hard)
    .sort()
    .filter((name) => (name.split('.')[0] === 'limits' && name.includes('.')) === limits)
    .map((name) => `${name}: ${used[name] ?? '0'}/${hard[name] ?? '0'}`)
    .join(', ');
}

/** The ResourceQuota kind: discovery facts, defaults, printer columns and field selectors. */
export const ResourceQuotaKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'ResourceQuota',
  plural: 'resourcequotas',
  shortNames: ['quota'],
  scope: 'Namespaced',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: ResourceQuotaSchema,
  columns: [
    AGE_COLUMN,
    { name: 'Request', type: 'string', description: 'Request usage of the quota.', cell: (o) => usage(o, false) },
    { name: 'Limit', type: 'string', description: 'Limit usage of the quota.', cell: (o) => usage(o, true) },
  ],
});
