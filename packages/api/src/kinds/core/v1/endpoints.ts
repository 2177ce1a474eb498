/** core/v1 Endpoints: the addresses that implement a service. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { EndpointSubsetSchema } from './types';

const P = schemaPrefix('', 'v1');

/** Endpoints, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const EndpointsSchema = object(
  `${P}Endpoints`,
  {
    ...OBJECT_HEAD,
    subsets: opt(2, t.array(ref(EndpointSubsetSchema)), 'Sets of addresses and ports that comprise a service.'),
  },
  { description: 'Endpoints is a collection of endpoints that implement the actual service.' },
);
/** A Endpoints object in its JSON form. */
export type Endpoints = Static<typeof EndpointsSchema>;

function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** The Endpoints column: up to three `ip:port`, then ` + N more...`; `<none>` without subsets (`formatEndpoints`). */
export function formatEndpoints(ep: Endpoints): string {
  const subsets = ep.subsets ?? [];
  if (subsets.length === 0) return '<none>';
  const max = 3;
  const list: string[] = [];
  let count = 0;
  for (const ss of subsets) {
    const addresses = ss.addresses ?? [];
    if (!ss.ports?.length) {
      for (const a of addresses) {
        if (list.length < max) list.push(a.ip);
        count++;
      }
    } else {
      for (const port of ss.ports) {
        for (const a of addresses) {
          if (list.length < max) list.push(hostPort(a.ip, port.port));
          count++;
        }
      }
    }
  }
  const ret = list.join(',');
  return count > max ? `${ret} + ${count - max} more...` : ret;
}

/** The Endpoints kind: discovery facts, defaults, printer columns and field selectors. */
export const EndpointsKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'Endpoints',
  plural: 'endpoints',
  shortNames: ['ep'],
  scope: 'Namespaced',
  schema: EndpointsSchema,
  defaults(ep) {
    for (const ss of ep.subsets ?? []) for (const port of ss.ports ?? []) port.protocol ||= 'TCP';
  },
  columns: [
    {
      name: 'Endpoints',
      type: 'string',
      description: 'Endpoints of the service.',
      cell: (o) => formatEndpoints(o),
    },
    AGE_COLUMN,
  ],
});
