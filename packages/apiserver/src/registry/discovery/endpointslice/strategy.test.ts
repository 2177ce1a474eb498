import { type EndpointSlice, type FieldError } from '@platform/api';

import { validateEndpointSlice } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);
const slice = (s: Partial<EndpointSlice>): EndpointSlice => ({
  metadata: { name: 'e' },
  addressType: 'IPv4',
  endpoints: [],
  ...s,
});

describe('validateEndpointSlice', () => {
  it.each<[string, EndpointSlice, string[]]>([
    ['IPv4 endpoints', slice({ endpoints: [{ addresses: ['10.0.0.1'] }], ports: [{ name: 'http', port: 80 }] }), []],
    ['an FQDN endpoint', slice({ addressType: 'FQDN', endpoints: [{ addresses: ['db.example.com'] }] }), []],
    ['an unknown address type', slice({ addressType: 'IPX' as never }), ['FieldValueNotSupported addressType']],
    [
      'an IPv6 address in an IPv4 slice',
      slice({ endpoints: [{ addresses: ['::1'] }] }),
      ['FieldValueInvalid endpoints[0].addresses[0]'],
    ],
    [
      'an endpoint without addresses',
      slice({ endpoints: [{ addresses: [] }] }),
      ['FieldValueRequired endpoints[0].addresses'],
    ],
    [
      'too many endpoints',
      slice({ endpoints: Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] })) }),
      ['FieldValueTooMany endpoints'],
    ],
    ['duplicate port names', slice({ ports: [{ name: 'a' }, { name: 'a' }] }), ['FieldValueDuplicate ports[1].name']],
  ])('%s', (_name, s, expected) => {
    expect(show(validateEndpointSlice(s))).toEqual(expected);
  });
});
