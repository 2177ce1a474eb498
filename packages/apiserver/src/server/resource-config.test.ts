import { resolveResourceConfig } from './resource-config';

const served = new Map<string, string[]>([
  ['v1', ['pods', 'services']],
  ['apps/v1', ['deployments', 'replicasets']],
  ['batch/v1', ['jobs']],
  ['batch/v1beta1', ['cronjobs']],
  ['example.platform/v1alpha1', ['widgets']],
]);

function enabledVersions(entries: Record<string, string>): string[] {
  const c = resolveResourceConfig(new Map(Object.entries(entries)), served);
  return [...served.keys()].filter((gv) => c.versionEnabled(gv));
}

describe('resolveResourceConfig', () => {
  it.each<[string, Record<string, string>, string[]]>([
    ['defaults: GA and beta on, alpha off', {}, ['v1', 'apps/v1', 'batch/v1', 'batch/v1beta1']],
    ['api/all=false then one group back', { 'api/all': 'false', 'apps/v1': 'true' }, ['apps/v1']],
    ['api/all=true turns alpha on', { 'api/all': 'true' }, [...served.keys()]],
    ['api/beta=false', { 'api/beta': 'false' }, ['v1', 'apps/v1', 'batch/v1']],
    ['api/alpha=true', { 'api/alpha': '' }, [...served.keys()]],
    ['api/ga=false keeps beta', { 'api/ga': 'false' }, ['batch/v1beta1']],
    ['the core group by v1', { v1: 'false' }, ['apps/v1', 'batch/v1', 'batch/v1beta1']],
    ['the core group by api/legacy', { 'api/legacy': 'false' }, ['apps/v1', 'batch/v1', 'batch/v1beta1']],
    [
      'a specific key beats api/all whatever the order',
      { 'batch/v1': 'false', 'api/all': 'true' },
      ['v1', 'apps/v1', 'batch/v1beta1', 'example.platform/v1alpha1'],
    ],
  ])('%s', (_name, entries, expected) => {
    expect(enabledVersions(entries)).toEqual(expected);
  });

  it('switches single resources', () => {
    const c = resolveResourceConfig(
      new Map([
        ['apps/v1/replicasets', 'false'],
        ['api/v1/services', 'false'],
      ]),
      served,
    );
    expect([c.resourceEnabled('apps/v1', 'replicasets'), c.resourceEnabled('apps/v1', 'deployments')]).toEqual([
      false,
      true,
    ]);
    expect([c.resourceEnabled('v1', 'services'), c.resourceEnabled('v1', 'pods')]).toEqual([false, true]);
    // A resource of a version that is off is off.
    const off = resolveResourceConfig(
      new Map([
        ['apps/v1', 'false'],
        ['apps/v1/deployments', 'true'],
      ]),
      served,
    );
    expect(off.resourceEnabled('apps/v1', 'deployments')).toBe(false);
  });

  it.each<[Record<string, string>, RegExp]>([
    [{ 'apps/v2': 'true' }, /unknown API group versions or resources: apps\/v2; this server serves: v1, apps\/v1/],
    [{ 'apps/v1/widgets': 'false' }, /unknown .*apps\/v1\/widgets/],
    [{ 'apps/v1': 'yes' }, /invalid value apps\/v1=yes: the value must be true, false or empty/],
    [{ 'api/all': 'maybe' }, /invalid value api\/all=maybe/],
  ])('rejects %j', (entries, message) => {
    expect(() => resolveResourceConfig(new Map(Object.entries(entries)), served)).toThrow(message);
  });
});
