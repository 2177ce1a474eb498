/** discovery.platform/v1beta1 EndpointSlice: a subset of the endpoints of a service. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { ObjectReferenceSchema } from '../../core/v1/types';

const P = schemaPrefix('discovery.platform', 'v1beta1');

/** EndpointConditions, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EndpointConditionsSchema = object(`${P}EndpointConditions`, {
  ready: opt(1, ptr(t.bool()), 'The endpoint is ready to receive traffic.'),
  serving: opt(2, ptr(t.bool()), 'The endpoint is serving (regardless of terminating).'),
  terminating: opt(3, ptr(t.bool()), 'The endpoint is terminating.'),
});

/** ForZone, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ForZoneSchema = object(`${P}ForZone`, {
  name: req(1, t.string()),
});

/** EndpointHints, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EndpointHintsSchema = object(`${P}EndpointHints`, {
  forZones: opt(1, t.array(ref(ForZoneSchema)), 'Zones that should consume this endpoint.'),
});

/** EndpointSliceEndpoint, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EndpointSliceEndpointSchema = object(`${P}Endpoint`, {
  addresses: req(1, t.array(t.string()), 'Addresses of this endpoint.'),
  conditions: opt(2, ref(EndpointConditionsSchema), 'Current state of the endpoint.'),
  hostname: opt(3, ptr(t.string())),
  targetRef: opt(4, ref(ObjectReferenceSchema), 'The object providing the endpoint.'),
  topology: opt(5, t.map(t.string()), 'Topology of the endpoint (deprecated in favour of nodeName).'),
  nodeName: opt(6, ptr(t.string()), 'The node hosting this endpoint.'),
  hints: opt(7, ref(EndpointHintsSchema)),
});

/** EndpointSlicePort, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EndpointSlicePortSchema = object(`${P}EndpointPort`, {
  name: opt(1, ptr(t.string())),
  protocol: opt(2, ptr(t.enumOf(['TCP', 'UDP', 'SCTP']))),
  port: opt(3, ptr(t.int32())),
  appProtocol: opt(4, ptr(t.string())),
});

/** EndpointSlice, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EndpointSliceSchema = object(
  `${P}EndpointSlice`,
  {
    ...OBJECT_HEAD,
    addressType: req(4, t.enumOf(['IPv4', 'IPv6', 'FQDN']), 'Type of the addresses of this slice.'),
    // Not required: a service without ready pods has a slice with no endpoints (`null` from Go clients).
    endpoints: opt(2, t.array(ref(EndpointSliceEndpointSchema)), 'The unique endpoints of this slice.'),
    ports: opt(3, t.array(ref(EndpointSlicePortSchema)), 'Network ports exposed by each endpoint.'),
  },
  { description: 'EndpointSlice represents a subset of the endpoints that implement a service.' },
);
/** A EndpointSlice object in its JSON form. */
export type EndpointSlice = Static<typeof EndpointSliceSchema>;

function listWithMore(list: string[], count: number, max: number): string {
  const ret = list.join(',');
  if (count > max) return `${ret} + ${count - max} more...`;
  return ret || '<unset>';
}

/** The EndpointSlice kind: discovery facts, defaults, printer columns and field selectors. */
export const EndpointSliceKind = defineKind({
  group: 'discovery.platform',
  version: 'v1beta1',
  kind: 'EndpointSlice',
  plural: 'endpointslices',
  scope: 'Namespaced',
  schema: EndpointSliceSchema,
  defaults(slice) {
    for (const port of slice.ports ?? []) {
      port.name ??= '';
      port.protocol ??= 'TCP';
    }
  },
  columns: [
    { name: 'AddressType', type: 'string', description: 'Type of the addresses.', cell: (o) => o.addressType },
    {
      name: 'Ports',
      type: 'string',
      description: 'Ports of the endpoints.',
      cell: (o) => {
        const ports = o.ports ?? [];
        const list = ports.slice(0, 3).map((p) => (p.port !== undefined ? String(p.port) : p.name || '*'));
        return listWithMore(list, ports.length, 3);
      },
    },
    {
      name: 'Endpoints',
      type: 'string',
      description: 'Addresses of the endpoints.',
      cell: (o) => {
        const all = (o.endpoints ?? []).flatMap((e) => e.addresses);
        return listWithMore(all.slice(0, 3), all.length, 3);
      },
    },
    AGE_COLUMN,
  ],
});
