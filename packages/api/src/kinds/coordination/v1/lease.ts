/** coordination.platform/v1 Lease: a lease held by one holder (leader election, node heartbeats). */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, ref, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';

const P = schemaPrefix('coordination.platform', 'v1');

/** LeaseSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const LeaseSpecSchema = object(`${P}LeaseSpec`, {
  holderIdentity: opt(1, ptr(t.string()), 'Identity of the current holder of the lease.'),
  leaseDurationSeconds: opt(2, ptr(t.int32()), 'Seconds candidates wait before forcefully acquiring the lease.'),
  acquireTime: opt(3, t.microTime(), 'When the current lease was acquired.'),
  renewTime: opt(4, t.microTime(), 'When the current holder last updated the lease.'),
  leaseTransitions: opt(5, ptr(t.int32()), 'Number of transitions of the lease between holders.'),
});

/** Lease, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const LeaseSchema = object(
  `${P}Lease`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(LeaseSpecSchema), 'Specification of the lease.'),
  },
  { description: 'Lease defines a lease concept.' },
);
/** A Lease object in its JSON form. */
export type Lease = Static<typeof LeaseSchema>;

/** The Lease kind: discovery facts, defaults, printer columns and field selectors. */
export const LeaseKind = defineKind({
  group: 'coordination.platform',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  scope: 'Namespaced',
  schema: LeaseSchema,
  columns: [
    {
      name: 'Holder',
      type: 'string',
      description: 'Identity of the current holder.',
      cell: (o) => o.spec?.holderIdentity ?? '',
    },
    AGE_COLUMN,
  ],
});
