/**
 * discovery.platform EndpointSlice, in v1 and v1beta1 (Kubernetes 1.21 serves both: v1 went GA in 1.21 and is
 * preferred). The versions differ only in Endpoint: v1beta1 has `topology` (5) and `hints` (7); v1 has
 * `deprecatedTopology` (5, read-only), `zone` (7) and `hints` (8).
 */
import { type Static, type TObject } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../schema/schema';
import { defineKind, type Kind, OBJECT_HEAD, schemaPrefix } from '../../scheme/kind';
import { AGE_COLUMN } from '../../table/table';
import { ObjectReferenceSchema } from '../core/v1/types';

/** The discovery API group. */
export const DISCOVERY_GROUP = 'discovery.platform';

function endpointSliceSchemas(version: 'v1' | 'v1beta1') {
  const P = schemaPrefix(DISCOVERY_GROUP, version);
  const Conditions = object(`${P}EndpointConditions`, {
    ready: opt(1, ptr(t.bool()), 'The endpoint is ready to receive traffic.'),
    serving: opt(2, ptr(t.bool()), 'The endpoint is serving (regardless of terminating).'),
    terminating: opt(3, ptr(t.bool()), 'The endpoint is terminating.'),
  });
  const ForZone = object(`${P}ForZone`, { name: req(1, t.string(), 'Name of the zone.') });
  const Hints = object(`${P}EndpointHints`, {
    forZones: opt(1, t.array(ref(ForZone)), 'Zones that should consume this endpoint.'),
  });
  const common = {
    addresses: req(1, t.array(t.string()), 'Addresses of this endpoint.'),
    conditions: opt(2, ref(Conditions), 'Current state of the endpoint.'),
    hostname: opt(3, ptr(t.string()), 'Hostname of this endpoint.'),
    targetRef: opt(4, ref(ObjectReferenceSchema), 'The object providing the endpoint.'),
    nodeName: opt(6, ptr(t.string()), 'The node hosting this endpoint.'),
  };
  const Endpoint = object(
    `${P}Endpoint`,
    version === 'v1'
      ? {
          ...common,
          deprecatedTopology: opt(5, t.map(t.string()), 'Topology of the v1beta1 API; not writable through v1.'),
          zone: opt(7, ptr(t.string()), 'The zone this endpoint exists in.'),
          hints: opt(8, ref(Hints), 'How the endpoint should be consumed.'),
        }
      : {
          ...common,
          topology: opt(5, t.map(t.string()), 'Topology of the endpoint (deprecated for nodeName).'),
          hints: opt(7, ref(Hints), 'How the endpoint should be consumed.'),
        },
    { description: 'Endpoint represents a single logical "backend" implementing a service.' },
  );
  const Port = object(`${P}EndpointPort`, {
    name: opt(1, ptr(t.string()), 'Name of the port; empty by default.'),
    protocol: opt(2, ptr(t.enumOf(['TCP', 'UDP', 'SCTP'])), 'TCP (default), UDP or SCTP.'),
    port: opt(3, ptr(t.int32()), 'Port number; all ports when unset.'),
    appProtocol: opt(4, ptr(t.string()), 'Application protocol of the port.'),
  });
  return object(
    `${P}EndpointSlice`,
    {
      ...OBJECT_HEAD,
      addressType: req(4, t.enumOf(['IPv4', 'IPv6', 'FQDN']), 'Type of the addresses of this slice.'),
      // Not required: a service without ready pods has a slice with no endpoints (`null` from Go clients).
      endpoints: opt(2, t.array(ref(Endpoint)), 'The unique endpoints of this slice.'),
      ports: opt(3, t.array(ref(Port)), 'Network ports exposed by each endpoint.'),
    },
    { description: 'EndpointSlice represents a subset of the endpoints that implement a service.' },
  );
}

/** EndpointSlice in discovery.platform/v1 (the preferred version). */
export const EndpointSliceSchema = endpointSliceSchemas('v1');
/** EndpointSlice in discovery.platform/v1beta1. */
export const EndpointSliceV1beta1Schema = endpointSliceSchemas('v1beta1');
/** A discovery.platform/v1 EndpointSlice object in its JSON form. */
export type EndpointSlice = Static<typeof EndpointSliceSchema>;

/** The fields of a slice of either version that defaults and the printer read. */
interface SliceView {
  addressType?: string;
  endpoints?: { addresses?: string[] }[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}

function listWithMore(list: string[], count: number, max: number): string {
  const ret = list.join(',');
  if (count > max) return `${ret} + ${count - max} more...`;
  return ret || '<unset>';
}

function endpointSliceKind<S extends TObject>(version: string, schema: S): Kind<S> {
  const view = (o: Static<S>): SliceView => o as unknown as SliceView;
  return defineKind({
    group: DISCOVERY_GROUP,
    version,
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    scope: 'Namespaced',
    schema,
    defaults(obj) {
      for (const port of view(obj).ports ?? []) {
        port.name ??= '';
        port.protocol ??= 'TCP';
      }
    },
    columns: [
      {
        name: 'AddressType',
        type: 'string',
        description: 'Type of the addresses.',
        cell: (o) => view(o).addressType ?? '',
      },
      {
        name: 'Ports',
        type: 'string',
        description: 'Ports of the endpoints.',
        cell: (o) => {
          const ports = view(o).ports ?? [];
          const list = ports.slice(0, 3).map((p) => (p.port !== undefined ? String(p.port) : p.name || '*'));
          return listWithMore(list, ports.length, 3);
        },
      },
      {
        name: 'Endpoints',
        type: 'string',
        description: 'Addresses of the endpoints.',
        cell: (o) => {
          const all = (view(o).endpoints ?? []).flatMap((e) => e.addresses ?? []);
          return listWithMore(all.slice(0, 3), all.length, 3);
        },
      },
      AGE_COLUMN,
    ],
  });
}

/** The EndpointSlice kind in discovery.platform/v1: discovery facts, defaults and printer columns. */
export const EndpointSliceKind = endpointSliceKind('v1', EndpointSliceSchema);
/** The EndpointSlice kind in discovery.platform/v1beta1. */
export const EndpointSliceV1beta1Kind = endpointSliceKind('v1beta1', EndpointSliceV1beta1Schema);
