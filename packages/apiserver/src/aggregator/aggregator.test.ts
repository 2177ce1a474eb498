/** Discovery order, APIService validation and location resolution of the aggregation layer. */
import { type APIService, type Endpoints, type Service } from '@platform/api';

import { validateAPIService } from './apiservice-strategy';
import { apiGroupList, type DiscoveryEntry } from './discovery';
import { resolveLocation } from './proxy';

const entry = (group: string, version: string, groupPriority: number, versionPriority: number): DiscoveryEntry => ({
  group,
  version,
  groupPriority,
  versionPriority,
});

describe('discovery order', () => {
  it('orders groups by their highest priority, then name, and versions by priority, then version', () => {
    const list = apiGroupList([
      entry('', 'v1', 18000, 1),
      entry('b.example', 'v1', 100, 15),
      entry('a.example', 'v1', 100, 15),
      entry('apps', 'v1', 17800, 15),
      entry('b.example', 'v2beta1', 2000, 15),
      entry('b.example', 'v1alpha1', 100, 20),
    ]);
    expect(list.groups.map((g) => g.name)).toEqual(['apps', 'b.example', 'a.example']);
    expect(list.groups[1]?.versions.map((v) => v.version)).toEqual(['v1alpha1', 'v1', 'v2beta1']);
    expect(list.groups[1]?.preferredVersion?.version).toBe('v1alpha1');
  });
});

describe('validateAPIService', () => {
  const valid: APIService = {
    metadata: { name: 'v1.wardle.example' },
    spec: {
      group: 'wardle.example',
      version: 'v1',
      service: { namespace: 'ns', name: 'svc', port: 443 },
      groupPriorityMinimum: 100,
      versionPriority: 10,
    },
  };
  it('accepts a valid APIService and the core v1.', () => {
    expect(validateAPIService(valid)).toEqual([]);
    expect(
      validateAPIService({
        metadata: { name: 'v1.' },
        spec: { version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 },
      }),
    ).toEqual([]);
  });
  it.each([
    [
      'a caBundle with insecureSkipTLSVerify',
      { caBundle: 'YQ==', insecureSkipTLSVerify: true },
      'spec.insecureSkipTLSVerify',
    ],
    ['an invalid port', { service: { namespace: 'ns', name: 'svc', port: 70000 } }, 'spec.service.port'],
    ['a service without a name', { service: { namespace: 'ns', port: 443 } }, 'spec.service.name'],
    ['an empty group with another version than v1', { group: '', version: 'v2' }, 'spec.group'],
  ])('refuses %s', (_what, change, field) => {
    const o = { ...valid, spec: { ...valid.spec, ...change } } as APIService;
    expect(validateAPIService(o).map((e) => e.field)).toContain(field);
  });
});

describe('resolveLocation', () => {
  const svc: Service = {
    metadata: { name: 'svc', namespace: 'ns' },
    spec: { clusterIP: '10.0.0.9', ports: [{ name: 'https', port: 443, targetPort: 8443 }] },
  };
  const eps: Endpoints = {
    metadata: { name: 'svc', namespace: 'ns' },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: 8443 }] }],
  };
  const a: APIService = {
    metadata: { name: 'v1.x' },
    spec: {
      group: 'x',
      version: 'v1',
      service: { namespace: 'ns', name: 'svc', port: 443 },
      groupPriorityMinimum: 1,
      versionPriority: 1,
    },
  };
  const lookup = { service: () => svc, endpoints: () => eps };

  it('goes to the cluster IP and port, or to an endpoint with aggregator routing', () => {
    expect(resolveLocation(a, lookup, false)).toEqual({ host: '10.0.0.9', port: 443 });
    expect(resolveLocation(a, lookup, true)).toEqual({ host: '127.0.0.1', port: 8443 });
  });
  it('says why a service cannot be reached', () => {
    expect(() => resolveLocation(a, { service: () => undefined, endpoints: () => eps }, false)).toThrow(
      'service "svc" not found',
    );
    expect(() => resolveLocation(a, { service: () => svc, endpoints: () => ({ ...eps, subsets: [] }) }, true)).toThrow(
      'no endpoints available for service "svc"',
    );
  });
});
