import {
  type ApiObject,
  ConfigMapKind,
  ControllerRevisionKind,
  DeploymentKind,
  isStatusError,
  type StatusError,
} from '@platform/api';

import {
  dropUnreadableManagedFields,
  FieldManager,
  LAST_APPLIED_ANNOTATION,
  managerOrUserAgent,
} from './field-manager';

const NOW = Date.parse('2021-04-08T10:00:00Z');

interface Entry {
  manager: string;
  operation: string;
  fieldsV1: Record<string, unknown>;
}
type Obj = ApiObject & { data?: Record<string, string>; spec?: { replicas?: number } };

function entries(obj: unknown): [string, string][] {
  return ((obj as { metadata: { managedFields?: Entry[] } }).metadata.managedFields ?? []).map((e) => [
    e.manager,
    e.operation,
  ]);
}

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    if (isStatusError(err)) return err;
    throw err;
  }
  throw new Error('expected a StatusError');
}

const cms = new FieldManager(ConfigMapKind, () => NOW);
const cm = (data: Record<string, string>, extra: Record<string, unknown> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'default', ...extra },
  data,
});

describe('managerOrUserAgent', () => {
  it.each([
    ['explicit', 'kubectl-edit', 'kubectl/v1.20.2 (linux/amd64)', 'kubectl-edit'],
    ['from the User-Agent', undefined, 'kubectl/v1.20.2 (linux/amd64) kubernetes/faecb19', 'kubectl'],
    ['without unprintable characters', undefined, 'my\u0007tool/1.0', 'mytool'],
    ['cut at 128 bytes', undefined, 'x'.repeat(200), 'x'.repeat(128)],
    ['empty without either', undefined, undefined, ''],
  ])('%s', (_name, fieldManager, userAgent, want) => {
    expect(managerOrUserAgent(fieldManager, userAgent)).toBe(want);
  });
});

describe('FieldManager.update', () => {
  it('takes managed fields sent with the update, resets on [{}], and keeps the stored ones when unreadable', () => {
    const created = cms.update(undefined, cm({ a: '1' }), 'creator');
    expect(entries(created)).toEqual([['creator', 'Update']]);

    const edited = cms.update(
      created,
      { ...cm({ a: '1' }), metadata: { ...created.metadata, managedFields: [] } },
      'x',
    );
    expect(edited.metadata?.managedFields).toBeUndefined();

    const sent = cm({ a: '1', b: '2' }, { managedFields: [{ manager: 'x', operation: 'Nope' }] });
    dropUnreadableManagedFields(sent);
    expect(sent.metadata?.managedFields).toBeUndefined();
    const kept = cms.update(created, sent, 'adder');
    expect(entries(kept).sort()).toEqual([
      ['adder', 'Update'],
      ['creator', 'Update'],
    ]);

    const reset = cm({ a: '1' }, { managedFields: [{}] });
    dropUnreadableManagedFields(reset);
    expect(reset.metadata?.managedFields).toEqual([]);
  });

  it('goes on without managed fields for a value nested too deeply to walk', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 200_000; i++) deep = { d: deep };
    const revisions = new FieldManager(ControllerRevisionKind, () => NOW);
    const obj: ApiObject & { data: unknown; revision: number } = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'r' },
      revision: 1,
      data: deep,
    };
    const out = revisions.update(undefined, obj, 'm');
    expect(out.metadata?.managedFields).toBeUndefined();
    expect(statusOf(() => revisions.apply(undefined, obj, 'm', false)).code).toBe(400);
  });

  it('does not change its inputs', () => {
    const live = cms.update(undefined, cm({ a: '1' }), 'creator');
    const next = cm({ a: '2' });
    const before = [structuredClone(live), structuredClone(next)];
    cms.update(live, next, 'm');
    expect([live, next]).toEqual(before);
  });
});

describe('FieldManager.apply', () => {
  it.each([
    ['a list', [], 'error decoding YAML: the apply configuration must be an object'],
    [
      'another version',
      { apiVersion: 'v2', kind: 'ConfigMap' },
      'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1',
    ],
    [
      'no kind',
      { apiVersion: 'v1' },
      'Incorrect kind specified in apply patch. Specified patch kind: , expected: ConfigMap',
    ],
    [
      'managed fields',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { managedFields: [] } },
      'metadata.managedFields must be nil in an apply configuration',
    ],
    [
      'an undeclared field',
      { apiVersion: 'v1', kind: 'ConfigMap', spec: {} },
      'failed to create typed patch object: .spec: field not declared in schema',
    ],
  ])('refuses %s with 400', (_name, config, message) => {
    const err = statusOf(() => cms.apply(undefined, config, 'm', false));
    expect([err.code, err.message]).toEqual([400, message]);
  });

  it('moves kubectl from client-side apply without conflicts on fields the last apply set', () => {
    const deployments = new FieldManager(DeploymentKind, () => NOW);
    const manifest = (replicas: number, image: string): Record<string, unknown> => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } },
      },
    });
    const clientSide = {
      ...manifest(2, 'a:1'),
      metadata: { name: 'web', annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(manifest(2, 'a:1')) } },
    };
    const live = deployments.update(undefined, clientSide, 'kubectl-client-side-apply');
    // Another manager changed the image since: that field still conflicts; replicas does not.
    const edited = deployments.update(
      live,
      {
        ...live,
        spec: {
          ...((live as { spec?: object }).spec ?? {}),
          template: (manifest(2, 'a:2').spec as { template: unknown }).template,
        },
      } as ApiObject,
      'editor',
    );
    const err = statusOf(() => deployments.apply(edited, manifest(3, 'a:3'), 'kubectl', false));
    expect(err.message).toBe(
      'Apply failed with 1 conflict: conflict with "editor" using apps/v1: .spec.template.spec.containers[name="c"].image',
    );
    // Another manager name gets every conflict.
    expect(statusOf(() => deployments.apply(edited, manifest(3, 'a:2'), 'other', false)).message).toContain(
      '.spec.replicas',
    );
    const applied = deployments.apply(edited, manifest(3, 'a:2'), 'kubectl', false) as {
      spec: { replicas: number };
      metadata: { annotations: Record<string, string> };
    };
    expect(applied.spec.replicas).toBe(3);
    expect(JSON.parse(applied.metadata.annotations[LAST_APPLIED_ANNOTATION] as string)).toEqual(manifest(3, 'a:2'));
    expect(entries(applied)).toContainEqual(['kubectl', 'Apply']);
  });
});
