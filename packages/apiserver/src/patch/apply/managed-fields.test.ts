import { type AnnotatedSchema, ConfigMapKind, DeploymentKind, type StatusError } from '@platform/api';

import { FieldSet } from './field-set';
import {
  applyOwnership,
  conflictError,
  decodeManagedFields,
  isApplyConflicts,
  encodeManagedFields,
  isResetManagedFields,
  ManagedFieldsError,
  managedTime,
  managerKey,
  type Managers,
  updateOwnership,
} from './managed-fields';
import { compare, fieldSetOf, merge } from './typed';

const DEPLOYMENT = { $ref: DeploymentKind.schema.$id } as AnnotatedSchema;
const CONFIGMAP = { $ref: ConfigMapKind.schema.$id } as AnnotatedSchema;
const NOW = Date.parse('2021-04-08T10:00:00.500Z');
const deploymentOptions = { schema: DEPLOYMENT, apiVersion: 'apps/v1', now: NOW };
const configMapOptions = { schema: CONFIGMAP, apiVersion: 'v1', now: NOW };

function deployment(replicas: number, image = 'nginx:1', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'nginx', image, ports: [{ containerPort: 80 }] }] },
      },
      ...extra,
    },
  };
}

function fields(managers: Managers, manager: string, operation: 'Apply' | 'Update', apiVersion: string): unknown {
  return managers.get(managerKey(manager, operation, apiVersion))?.set.toFieldsV1();
}

function thrown(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    if (isApplyConflicts(err)) return conflictError(err.conflicts);
    throw err;
  }
  throw new Error('expected an error');
}

describe('field sets through the schema', () => {
  it('owns leaves and list elements; keys lists by their merge keys; LabelSelector is atomic', () => {
    const s = fieldSetOf(deployment(3), DEPLOYMENT);
    expect(s.toFieldsV1()).toEqual({
      'f:apiVersion': {},
      'f:kind': {},
      'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:name': {}, 'f:namespace': {} },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"nginx"}': {
                '.': {},
                'f:image': {},
                'f:name': {},
                'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
              },
            },
          },
        },
      },
    });
  });

  it('treats merge lists without a key as sets', () => {
    const s = fieldSetOf({ metadata: { finalizers: ['a', 'b'] } }, CONFIGMAP);
    expect(s.sorted()).toEqual([
      ['f:metadata', 'f:finalizers', 'v:"a"'],
      ['f:metadata', 'f:finalizers', 'v:"b"'],
    ]);
  });

  it('refuses undeclared fields and duplicate keys in strict mode', () => {
    expect(() => fieldSetOf({ spec: { bogus: 1 } }, DEPLOYMENT, true)).toThrow(
      '.spec.bogus: field not declared in schema',
    );
    const dup = deployment(1);
    (dup.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers.push({ name: 'nginx' });
    expect(() => fieldSetOf(dup, DEPLOYMENT, true)).toThrow('duplicate entries for key [name="nginx"]');
  });

  it('compares: added containers and leaves, removed subtrees, modified leaves', () => {
    const c = compare(
      { data: { a: '1', b: '2' }, metadata: { name: 'x' } },
      { data: { a: '9', c: '3' }, metadata: { name: 'x', labels: { l: 'v' } } },
      CONFIGMAP,
    );
    expect(c.modified.sorted()).toEqual([['f:data', 'f:a']]);
    expect(c.removed.sorted()).toEqual([['f:data', 'f:b']]);
    expect(c.added.sorted()).toEqual([
      ['f:data', 'f:c'],
      ['f:metadata', 'f:labels'],
      ['f:metadata', 'f:labels', 'f:l'],
    ]);
  });

  it('merges keyed lists element by element and replaces atomic values', () => {
    const live = deployment(1, 'nginx:1');
    const config = {
      spec: {
        selector: { matchLabels: { other: 'x' } },
        template: {
          spec: {
            containers: [
              { name: 'sidecar', image: 'busybox' },
              { name: 'nginx', image: 'nginx:2' },
            ],
          },
        },
      },
    };
    const merged = merge(live, config, DEPLOYMENT) as ReturnType<typeof deployment>;
    const spec = merged.spec as {
      replicas: number;
      selector: unknown;
      template: { spec: { containers: { name: string; image: string; ports?: unknown }[] } };
    };
    expect(spec.replicas).toBe(1);
    expect(spec.selector).toEqual({ matchLabels: { other: 'x' } });
    expect(spec.template.spec.containers).toEqual([
      { name: 'nginx', image: 'nginx:2', ports: [{ containerPort: 80 }] },
      { name: 'sidecar', image: 'busybox' },
    ]);
  });
});

describe('update ownership', () => {
  it('gives a creator every field it set, without the server-owned ones', () => {
    const r = updateOwnership(undefined, deployment(2), new Map(), 'kubectl-create', deploymentOptions);
    const e = r.managers.get(managerKey('kubectl-create', 'Update', 'apps/v1'));
    expect(e?.time).toBe('2021-04-08T10:00:00Z');
    const f = e?.set.toFieldsV1() as Record<string, Record<string, unknown>>;
    expect(f['f:metadata']).toEqual({ 'f:labels': { '.': {}, 'f:app': {} } });
    expect(f['f:apiVersion']).toBeUndefined();
    expect(f['f:spec']?.['f:replicas']).toEqual({});
    expect(r.changed).toBe(true);
  });

  it('moves changed fields to the updater, drops removed fields from everyone, keeps time when nothing changes', () => {
    const created = updateOwnership(undefined, deployment(2), new Map(), 'creator', deploymentOptions);
    const later = { ...deploymentOptions, now: NOW + 60_000 };
    const next = deployment(5);
    delete (next.metadata as { labels?: unknown }).labels;
    const r = updateOwnership(created.object, next, created.managers, 'scaler', later);
    expect(fields(r.managers, 'scaler', 'Update', 'apps/v1')).toEqual({ 'f:spec': { 'f:replicas': {} } });
    const creator = r.managers.get(managerKey('creator', 'Update', 'apps/v1'));
    expect(creator?.set.has(['f:spec', 'f:replicas'])).toBe(false);
    expect(creator?.set.has(['f:metadata', 'f:labels', 'f:app'])).toBe(false);
    expect(creator?.time).toBe('2021-04-08T10:00:00Z');

    const same = updateOwnership(r.object, r.object, r.managers, 'noop', { ...later, now: NOW + 120_000 });
    expect(same.changed).toBe(false);
    expect(same.managers.has(managerKey('noop', 'Update', 'apps/v1'))).toBe(false);
  });

  it('keeps at most ten update managers, merging the oldest into ancient-changes', () => {
    let obj: unknown = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: {} };
    let managers: Managers = new Map();
    for (let i = 0; i < 12; i++) {
      const next = structuredClone(obj) as { data: Record<string, string> };
      next.data[`k${i}`] = 'v';
      const r = updateOwnership(obj, next, managers, `m${i}`, { ...configMapOptions, now: NOW + i * 1000 });
      obj = r.object;
      managers = r.managers;
    }
    const names = [...managers.values()].map((e) => e.manager);
    expect(names).toHaveLength(10);
    expect(names).toContain('ancient-changes');
    expect(names).not.toContain('m0');
    expect(names).toContain('m11');
    const ancient = [...managers.values()].find((e) => e.manager === 'ancient-changes');
    expect(ancient?.set.sorted()).toEqual([
      ['f:data', 'f:k0'],
      ['f:data', 'f:k1'],
      ['f:data', 'f:k2'],
    ]);
  });
});

describe('apply ownership', () => {
  it('creates, owning exactly the applied fields', () => {
    const r = applyOwnership(undefined, deployment(3), new Map(), 'deployer', false, deploymentOptions);
    expect(r.changed).toBe(true);
    const f = fields(r.managers, 'deployer', 'Apply', 'apps/v1') as Record<string, unknown>;
    expect(f['f:metadata']).toEqual({ 'f:labels': { 'f:app': {} } });
    expect(r.object).toEqual(deployment(3));
  });

  it('conflicts with another manager over a changed field, and force takes it over', () => {
    const created = applyOwnership(undefined, deployment(3), new Map(), 'deployer', false, deploymentOptions);
    const scaled = updateOwnership(created.object, deployment(5), created.managers, 'scaler', deploymentOptions);
    const err = thrown(() =>
      applyOwnership(scaled.object, deployment(3), scaled.managers, 'deployer', false, deploymentOptions),
    );
    expect(err.code).toBe(409);
    expect(err.status.reason).toBe('Conflict');
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas');
    expect(err.status.details?.causes).toEqual([
      { type: 'FieldManagerConflict', message: 'conflict with "scaler" using apps/v1', field: '.spec.replicas' },
    ]);

    const forced = applyOwnership(scaled.object, deployment(3), scaled.managers, 'deployer', true, deploymentOptions);
    expect((forced.object as { spec: { replicas: number } }).spec.replicas).toBe(3);
    expect(forced.managers.has(managerKey('scaler', 'Update', 'apps/v1'))).toBe(false);
  });

  it('lists several conflicts by manager', () => {
    const a = applyOwnership(undefined, deployment(1, 'img:1'), new Map(), 'a', false, deploymentOptions);
    const err = thrown(() =>
      applyOwnership(a.object, deployment(2, 'img:2'), a.managers, 'b', false, deploymentOptions),
    );
    expect(err.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "a":\n- .spec.replicas\n- .spec.template.spec.containers[name="nginx"].image',
    );
    expect(err.status.details?.causes?.map((c) => c.field)).toEqual([
      '.spec.replicas',
      '.spec.template.spec.containers[name="nginx"].image',
    ]);
  });

  it('shares fields applied with the same value', () => {
    const a = applyOwnership(undefined, deployment(3), new Map(), 'a', false, deploymentOptions);
    const b = applyOwnership(
      a.object,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3 } },
      a.managers,
      'b',
      false,
      deploymentOptions,
    );
    expect(b.changed).toBe(false);
    expect(b.managers.get(managerKey('a', 'Apply', ''))?.set.has(['f:spec', 'f:replicas'])).toBe(true);
    expect(b.managers.get(managerKey('b', 'Apply', ''))?.set.has(['f:spec', 'f:replicas'])).toBe(true);
    // a drops replicas from its configuration: b still owns it, so it stays.
    const withoutReplicas = deployment(3);
    delete (withoutReplicas.spec as { replicas?: number }).replicas;
    const a2 = applyOwnership(b.object, withoutReplicas, b.managers, 'a', false, deploymentOptions);
    expect((a2.object as { spec: { replicas?: number } }).spec.replicas).toBe(3);
  });

  it('removes fields dropped from the configuration that nobody else owns', () => {
    const withLabels = (labels: Record<string, string>): Record<string, unknown> => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', labels },
      data: { a: '1' },
    });
    const first = applyOwnership(undefined, withLabels({ x: '1', y: '2' }), new Map(), 'a', false, configMapOptions);
    const second = applyOwnership(first.object, withLabels({ x: '1' }), first.managers, 'a', false, configMapOptions);
    expect((second.object as { metadata: { labels: unknown; name: string } }).metadata).toEqual({
      name: 'c',
      labels: { x: '1' },
    });
    const noData = withLabels({ x: '1' });
    delete noData.data;
    const third = applyOwnership(second.object, noData, second.managers, 'a', false, configMapOptions);
    expect((third.object as { data?: unknown }).data).toBeUndefined();
  });

  it('removes a dropped list element with the fields nobody else owns in it', () => {
    const two = deployment(1);
    (two.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers.push({
      name: 'sidecar',
      image: 'busybox',
    });
    const first = applyOwnership(undefined, two, new Map(), 'a', false, deploymentOptions);
    const second = applyOwnership(first.object, deployment(1), first.managers, 'a', false, deploymentOptions);
    const containers = (second.object as { spec: { template: { spec: { containers: { name: string }[] } } } }).spec
      .template.spec.containers;
    expect(containers.map((c) => c.name)).toEqual(['nginx']);
  });
});

describe('encoding managed fields', () => {
  it('round-trips and orders Apply before Update, then by time', () => {
    const managers: Managers = new Map([
      [
        managerKey('u', 'Update', 'v1'),
        {
          manager: 'u',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2021-01-01T00:00:00Z',
          set: FieldSet.of([['f:data', 'f:a']]),
        },
      ],
      [
        managerKey('a', 'Apply', 'v1'),
        {
          manager: 'a',
          operation: 'Apply',
          apiVersion: 'v1',
          time: '2021-02-01T00:00:00Z',
          set: FieldSet.of([['f:data', 'f:b']]),
        },
      ],
      [
        managerKey('empty', 'Update', 'v1'),
        { manager: 'empty', operation: 'Update', apiVersion: 'v1', set: FieldSet.empty() },
      ],
    ]);
    const encoded = encodeManagedFields(managers);
    expect(encoded?.map((e) => e.manager)).toEqual(['a', 'u']);
    expect(encoded?.[0]).toEqual({
      manager: 'a',
      operation: 'Apply',
      apiVersion: 'v1',
      time: '2021-02-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:b': {} } },
    });
    const back = decodeManagedFields(encoded);
    expect(back.get(managerKey('u', 'Update', 'v1'))?.set.sorted()).toEqual([['f:data', 'f:a']]);
    expect(encodeManagedFields(new Map())).toBeUndefined();
  });

  it.each([
    ['not a list', {}],
    ['a bad operation', [{ manager: 'm', operation: 'Patch', fieldsType: 'FieldsV1' }]],
    ['a bad fieldsType', [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV2' }]],
    ['bad fields', [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { bad: {} } }]],
    [
      'a duplicate manager',
      [
        { manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1' },
        { manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1' },
      ],
    ],
  ])('refuses %s', (_name, value) => {
    expect(() => decodeManagedFields(value)).toThrow(ManagedFieldsError);
  });

  it('recognises the reset request and formats times', () => {
    expect(isResetManagedFields([{}])).toBe(true);
    expect(isResetManagedFields([])).toBe(true);
    expect(isResetManagedFields(undefined)).toBe(false);
    expect(isResetManagedFields([{ manager: 'm' }])).toBe(false);
    expect(managedTime(NOW)).toBe('2021-04-08T10:00:00Z');
  });
});
