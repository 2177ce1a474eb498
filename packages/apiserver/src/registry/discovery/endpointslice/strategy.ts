/**
 * The EndpointSlice strategy (model: Kubernetes 1.21 `pkg/apis/discovery/validation.ValidateEndpointSlice`): the
 * address type is IPv4, IPv6 or FQDN and never changes; at most 1000 endpoints of 1 to 100 addresses each, valid
 * for the address type; at most 100 ports, named uniquely.
 */
import {
  type EndpointSlice,
  type FieldError,
  FieldPath,
  field,
  isDNS1123Label,
  isDNS1123Subdomain,
  isValidIP,
  isValidPortNum,
  type Kind,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';

/** The largest number of endpoints of one slice. */
export const MAX_ENDPOINTS = 1000;
/** The largest number of ports of one slice. */
export const MAX_PORTS = 100;
/** The largest number of addresses of one endpoint. */
export const MAX_ADDRESSES = 100;
const ADDRESS_TYPES = ['IPv4', 'IPv6', 'FQDN'];

function validateAddress(type: string, address: string, path: FieldPath): FieldError[] {
  if (type === 'FQDN') return field.invalidEach(path, address, isDNS1123Subdomain(address));
  const errs = field.invalidEach(path, address, isValidIP(address));
  if (errs.length === 0 && (type === 'IPv4') !== !address.includes(':')) {
    return [field.invalid(path, address, `must be a valid ${type} address`)];
  }
  return errs;
}

/** Validation of an EndpointSlice. */
export function validateEndpointSlice(s: EndpointSlice): FieldError[] {
  const errs: FieldError[] = [];
  const type = s.addressType;
  if (!ADDRESS_TYPES.includes(type)) errs.push(field.notSupported(new FieldPath('addressType'), type, ADDRESS_TYPES));
  const endpoints = s.endpoints ?? [];
  if (endpoints.length > MAX_ENDPOINTS)
    errs.push(field.tooMany(new FieldPath('endpoints'), endpoints.length, MAX_ENDPOINTS));
  endpoints.forEach((e, i) => {
    const p = new FieldPath('endpoints').index(i);
    const addresses = e.addresses ?? [];
    if (addresses.length === 0) errs.push(field.required(p.child('addresses'), 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES)
      errs.push(field.tooMany(p.child('addresses'), addresses.length, MAX_ADDRESSES));
    if (ADDRESS_TYPES.includes(type))
      addresses.forEach((a, j) => errs.push(...validateAddress(type, a, p.child('addresses').index(j))));
    if (e.hostname) errs.push(...field.invalidEach(p.child('hostname'), e.hostname, isDNS1123Label(e.hostname)));
    if (e.nodeName) errs.push(...field.invalidEach(p.child('nodeName'), e.nodeName, isDNS1123Subdomain(e.nodeName)));
  });
  const ports = s.ports ?? [];
  if (ports.length > MAX_PORTS) errs.push(field.tooMany(new FieldPath('ports'), ports.length, MAX_PORTS));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const p = new FieldPath('ports').index(i);
    const name = port.name ?? '';
    if (name) errs.push(...field.invalidEach(p.child('name'), name, isDNS1123Label(name)));
    if (names.has(name)) errs.push(field.duplicate(p.child('name'), name));
    names.add(name);
    if (typeof port.port === 'number')
      errs.push(...field.invalidEach(p.child('port'), port.port, isValidPortNum(port.port)));
  });
  return errs;
}

/** The strategy of `endpointslices` (discovery v1 and v1beta1). */
export function endpointSliceStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateEndpointSlice(obj as EndpointSlice),
    validateUpdate: (_ctx, obj, old) => {
      const errs = validateEndpointSlice(obj as EndpointSlice);
      const type = (obj as EndpointSlice).addressType;
      if (type !== (old as EndpointSlice).addressType)
        errs.push(field.invalid(new FieldPath('addressType'), type, 'field is immutable'));
      return errs;
    },
  });
}
