import { type FieldError, fieldErrorToString, type Ingress, ingressToV1, type NetworkPolicy } from '@platform/api';

import {
  validateIngress,
  validateIngressClass,
  validateIngressClassUpdate,
  validateIngressCreate,
  validateNetworkPolicy,
} from './validation';

const show = (errs: FieldError[]): string[] => errs.map(fieldErrorToString);

const svc = (name: string, port: { name?: string; number?: number }): object => ({ service: { name, port } });
const path = (p: object): Ingress =>
  ({
    metadata: { name: 'i' },
    spec: {
      rules: [
        {
          host: 'a.example.com',
          http: { paths: [{ path: '/', pathType: 'Prefix', backend: svc('s', { number: 80 }), ...p }] },
        },
      ],
    },
  }) as Ingress;

describe('validateIngress (1.21 messages)', () => {
  it.each<[string, Ingress, string[]]>([
    ['a valid ingress', path({}), []],
    [
      'neither rules nor a default backend',
      { spec: {} },
      ['spec.rules: Invalid value: "null": either `defaultBackend` or `rules` must be specified'],
    ],
    [
      'a missing path type',
      path({ pathType: undefined }),
      ['spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified'],
    ],
    [
      'an unknown path type',
      path({ pathType: 'Regex' }),
      [
        'spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
      ],
    ],
    [
      'a relative Prefix path',
      path({ path: 'a' }),
      ['spec.rules[0].http.paths[0].path: Invalid value: "a": must be an absolute path'],
    ],
    [
      'a path with //',
      path({ path: '/a//b' }),
      ['spec.rules[0].http.paths[0].path: Invalid value: "/a//b": must not contain \'//\''],
    ],
    [
      'a path ending in /..',
      path({ path: '/a/..' }),
      ['spec.rules[0].http.paths[0].path: Invalid value: "/a/..": cannot end with \'/..\''],
    ],
    [
      'a relative ImplementationSpecific path',
      path({ path: 'x', pathType: 'ImplementationSpecific' }),
      ['spec.rules[0].http.paths[0].path: Invalid value: "x": must be an absolute path'],
    ],
    [
      'both port name and number',
      path({ backend: svc('s', { name: 'http', number: 80 }) }),
      ['spec.rules[0].http.paths[0].backend.service.port: Invalid value: "": cannot set both port name & port number'],
    ],
    [
      'no port',
      path({ backend: svc('s', {}) }),
      ['spec.rules[0].http.paths[0].backend.service.port: Required value: port name or number is required'],
    ],
    [
      'both backends',
      path({ backend: { ...svc('s', { number: 1 }), resource: { kind: 'K', name: 'n' } } }),
      ['spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends'],
    ],
    [
      'no backend',
      path({ backend: {} }),
      ['spec.rules[0].http.paths[0].backend: Invalid value: "": resource or service backend is required'],
    ],
    [
      'an IP as host',
      { spec: { rules: [{ host: '10.0.0.1' }] } },
      ['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address'],
    ],
    ['a wildcard host', { spec: { rules: [{ host: '*.example.com' }] } }, []],
  ])('%s', (_name, ing, expected) => {
    expect(show(validateIngress(ing))).toEqual(expected);
  });

  it('validates a v1beta1 Ingress in its v1 form', () => {
    const beta = { spec: { backend: { serviceName: 'web', servicePort: 'http' } } };
    expect(show(validateIngress(ingressToV1(beta)))).toEqual([]);
    expect(
      show(validateIngress(ingressToV1({ spec: { backend: { serviceName: 'Web_1', servicePort: 80 } } }))),
    ).toEqual([
      expect.stringMatching(/^spec\.defaultBackend\.service\.name: Invalid value: "Web_1": a DNS-1035 label/),
    ]);
  });

  it('refuses a new Ingress with both the class annotation and the class field', () => {
    const ing = path({});
    ing.metadata = { name: 'i', annotations: { 'kubernetes.io/ingress.class': 'nginx' } };
    ing.spec!.ingressClassName = 'nginx';
    expect(show(validateIngressCreate(ing))).toEqual([
      'annotations.kubernetes.io/ingress.class: Invalid value: "nginx": can not be set when the class field is also set',
    ]);
  });
});

describe('validateIngressClass', () => {
  it.each<[string, object, string[]]>([
    ['a valid class', { controller: 'example.com/ingress' }, []],
    ['no controller', {}, ['spec.controller: Required value']],
    [
      'a controller without a domain',
      { controller: 'ingress' },
      ['spec.controller: Invalid value: "ingress": must be a domain-prefixed path (such as "acme.io/foo")'],
    ],
    [
      'parameters without kind and name',
      { controller: 'a.io/b', parameters: {} },
      [
        'spec.parameters.kind: Required value: kind is required',
        'spec.parameters.name: Required value: name is required',
      ],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(show(validateIngressClass({ metadata: { name: 'c' }, spec }))).toEqual(expected);
  });

  it('keeps the controller', () => {
    expect(
      show(validateIngressClassUpdate({ spec: { controller: 'a.io/x' } }, { spec: { controller: 'a.io/y' } })),
    ).toEqual(['spec.controller: Invalid value: "a.io/x": field is immutable']);
  });
});

describe('validateNetworkPolicy', () => {
  const np = (spec: object): NetworkPolicy =>
    ({ metadata: { name: 'n' }, spec: { podSelector: {}, ...spec } }) as NetworkPolicy;
  it.each<[string, NetworkPolicy, string[]]>([
    ['a valid policy', np({ ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }] }] }), []],
    [
      'an empty peer',
      np({ ingress: [{ from: [{}] }] }),
      ['spec.ingress[0].from[0]: Required value: must specify a peer'],
    ],
    [
      'an ipBlock with a selector',
      np({ egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] }] }),
      ['spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer'],
    ],
    [
      'an except outside the cidr',
      np({ ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['192.168.0.0/24'] } }] }] }),
      ['spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "192.168.0.0/24": must be a strict subset of `cidr`'],
    ],
    [
      'an unknown protocol',
      np({ ingress: [{ ports: [{ protocol: 'ICMP' }] }] }),
      ['spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'],
    ],
    [
      'an end port below the port',
      np({ ingress: [{ ports: [{ port: 100, endPort: 90 }] }] }),
      ['spec.ingress[0].ports[0].endPort: Invalid value: 90: must be greater than or equal to `port`'],
    ],
    [
      'an end port with a named port',
      np({ ingress: [{ ports: [{ port: 'http', endPort: 90 }] }] }),
      ['spec.ingress[0].ports[0].endPort: Forbidden: may not be specified when `port` is non-numeric'],
    ],
    [
      'an unknown policy type',
      np({ policyTypes: ['Sideways'] }),
      ['spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Egress", "Ingress"'],
    ],
  ])('%s', (_name, obj, expected) => {
    expect(show(validateNetworkPolicy(obj))).toEqual(expected);
  });
});
