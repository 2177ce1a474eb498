import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  type ApiObject,
  builtinScheme,
  ConfigMapKind,
  isStatusError,
  ProtobufCodec,
  type StatusError,
} from '@platform/api';

import { SqliteStore } from '../../storage/sqlite/sqlite-store';
import { StoreStorage } from '../../storage/storage';
import { type CreateStrategy, type RequestContext, type UpdateStrategy, type WatchEvent } from '../rest/rest';
import { selectionPredicate } from './predicate';
import { GenericStore } from './store';

const NOW = Date.parse('2021-04-08T12:00:00Z');
const ctx = (namespace = 'default'): RequestContext => ({ namespace, now: () => NOW });

const strategy: CreateStrategy & UpdateStrategy = {
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate: () => {},
  validate: () => [],
  prepareForUpdate: () => {},
  validateUpdate: () => [],
};

let dir: string;
let store: SqliteStore;
let configMaps: GenericStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'generic-store-'));
  store = await SqliteStore.open(join(dir, 'state.db'));
  configMaps = new GenericStore({
    kind: ConfigMapKind,
    keyPrefix: '/registry/configmaps',
    storage: new StoreStorage(store, new ProtobufCodec(builtinScheme())),
    createStrategy: strategy,
    updateStrategy: strategy,
    predicate: (o) => selectionPredicate(ConfigMapKind, o),
    randomSuffix: () => 'x7k2b',
  });
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function failure(p: Promise<unknown>): Promise<StatusError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isStatusError(err)) throw new Error(`expected a StatusError, got ${String(err)}`);
  return err;
}

const cm = (name: string, extra: Partial<ApiObject & { data: Record<string, string> }> = {}): ApiObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' }, ...extra }) as ApiObject;

const write = { dryRun: false };

describe('GenericStore create', () => {
  it('fills system metadata and stores the object', async () => {
    const created = await configMaps.create(ctx(), cm('one'), undefined, write);
    expect(created.metadata).toMatchObject({
      name: 'one',
      namespace: 'default',
      creationTimestamp: '2021-04-08T12:00:00Z',
      uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      resourceVersion: expect.stringMatching(/^\d+$/),
    });
    expect(await configMaps.get(ctx(), 'one', {})).toEqual(created);
  });

  it('generates names from generateName', async () => {
    const created = await configMaps.create(ctx(), cm('', { metadata: { generateName: 'web-' } }), undefined, write);
    expect(created.metadata?.name).toBe('web-x7k2b');
    const again = await failure(
      configMaps.create(ctx(), cm('', { metadata: { generateName: 'web-' } }), undefined, write),
    );
    expect(again.status).toMatchObject({ code: 409, reason: 'AlreadyExists', details: { retryAfterSeconds: 1 } });
  });

  it('answers 409 AlreadyExists for a taken name', async () => {
    await configMaps.create(ctx(), cm('one'), undefined, write);
    const err = await failure(configMaps.create(ctx(), cm('one'), undefined, write));
    expect(err.status).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'configmaps "one" already exists',
    });
  });

  it('answers 422 Invalid with causes for a bad name', async () => {
    const err = await failure(configMaps.create(ctx(), cm('A_B'), undefined, write));
    expect(err.status).toMatchObject({ code: 422, reason: 'Invalid', details: { kind: 'ConfigMap', name: 'A_B' } });
    expect(err.status.details?.causes?.[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });
    expect(err.message).toContain('a lowercase RFC 1123 subdomain must consist of');
  });

  it('answers 400 when the body names another namespace', async () => {
    const err = await failure(
      configMaps.create(ctx('a'), cm('x', { metadata: { name: 'x', namespace: 'b' } }), undefined, write),
    );
    expect(err.status).toMatchObject({
      code: 400,
      message: 'the namespace of the provided object does not match the namespace sent on the request',
    });
  });

  it('stores nothing on dry-run, and still refuses a taken name', async () => {
    const obj = await configMaps.create(ctx(), cm('dry'), undefined, { dryRun: true });
    expect(obj.metadata?.uid).toBeDefined();
    expect((await failure(configMaps.get(ctx(), 'dry', {}))).code).toBe(404);
    await configMaps.create(ctx(), cm('taken'), undefined, write);
    expect((await failure(configMaps.create(ctx(), cm('taken'), undefined, { dryRun: true }))).code).toBe(409);
  });

  it('runs the admission callback and stores nothing when it refuses', async () => {
    const refuse = async (): Promise<void> => {
      throw new Error('admission says no');
    };
    await expect(configMaps.create(ctx(), cm('no'), refuse, write)).rejects.toThrow('admission says no');
    expect((await failure(configMaps.get(ctx(), 'no', {}))).code).toBe(404);
  });
});

describe('GenericStore get', () => {
  it('answers 404 in Kubernetes words', async () => {
    const err = await failure(configMaps.get(ctx(), 'missing', {}));
    expect(err.status).toMatchObject({ code: 404, reason: 'NotFound', message: 'configmaps "missing" not found' });
  });

  it.each([['a/b'], ['..'], ['%2F']])('answers 400 for the path segment %p', async (name) => {
    expect((await failure(configMaps.get(ctx(), name, {}))).code).toBe(400);
  });
});

describe('GenericStore update', () => {
  const replace = (obj: ApiObject) => ({
    name: obj.metadata?.name ?? '',
    updatedObject: async () => structuredClone(obj),
  });

  it('updates, and answers 409 for a stale resourceVersion', async () => {
    const created = await configMaps.create(ctx(), cm('one'), undefined, write);
    const next = { ...structuredClone(created), data: { a: '2' } } as ApiObject;
    const { object: updated } = await configMaps.update(ctx(), replace(next), undefined, undefined, write);
    expect((updated as { data: Record<string, string> }).data).toEqual({ a: '2' });
    expect(updated.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);
    const stale = await failure(configMaps.update(ctx(), replace(next), undefined, undefined, write));
    expect(stale.status).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on configmaps "one": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('keeps system metadata, takes a uid as a precondition, and refuses a renamed object', async () => {
    const created = await configMaps.create(ctx(), cm('one'), undefined, write);
    const tampered = structuredClone(created);
    tampered.metadata = { ...tampered.metadata, uid: undefined, creationTimestamp: '2000-01-01T00:00:00Z' };
    const { object } = await configMaps.update(ctx(), replace(tampered), undefined, undefined, write);
    expect(object.metadata?.uid).toBe(created.metadata?.uid);
    expect(object.metadata?.creationTimestamp).toBe(created.metadata?.creationTimestamp);
    const otherUid = structuredClone(object);
    otherUid.metadata = { ...otherUid.metadata, uid: 'other' };
    const conflicting = await failure(configMaps.update(ctx(), replace(otherUid), undefined, undefined, write));
    expect([conflicting.code, conflicting.message]).toEqual([
      409,
      `Operation cannot be fulfilled on configmaps "one": Precondition failed: UID in precondition: other, UID in object meta: ${created.metadata?.uid}`,
    ]);
    const renamed = await failure(
      configMaps.update(ctx(), { name: 'one', updatedObject: async () => cm('two') }, undefined, undefined, write),
    );
    expect(renamed.message).toBe('the name of the object (two) does not match the name on the URL (one)');
  });

  it('answers 404 for a missing object when the resource does not create on update', async () => {
    expect((await failure(configMaps.update(ctx(), replace(cm('nope')), undefined, undefined, write))).code).toBe(404);
  });

  it('does not write an unchanged object', async () => {
    const created = await configMaps.create(ctx(), cm('one'), undefined, write);
    const { object } = await configMaps.update(ctx(), replace(created), undefined, undefined, write);
    expect(object.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  });
});

describe('GenericStore delete', () => {
  const del = { dryRun: false };

  it('deletes and answers with a Success Status', async () => {
    const created = await configMaps.create(ctx(), cm('one'), undefined, write);
    const r = await configMaps.delete(ctx(), 'one', undefined, del);
    expect(r).toEqual({
      deleted: true,
      object: expect.objectContaining({
        kind: 'Status',
        status: 'Success',
        details: expect.objectContaining({ name: 'one', uid: created.metadata?.uid }),
      }),
    });
    expect((await failure(configMaps.get(ctx(), 'one', {}))).code).toBe(404);
  });

  it('keeps an object with finalizers until the last one is removed', async () => {
    await configMaps.create(
      ctx(),
      cm('fin', { metadata: { name: 'fin', finalizers: ['example.com/cleanup'] } }),
      undefined,
      write,
    );
    const r = await configMaps.delete(ctx(), 'fin', undefined, del);
    expect(r.deleted).toBe(false);
    const terminating = await configMaps.get(ctx(), 'fin', {});
    expect(terminating.metadata).toMatchObject({
      deletionTimestamp: '2021-04-08T12:00:00Z',
      deletionGracePeriodSeconds: 0,
      finalizers: ['example.com/cleanup'],
    });
    // A second delete changes nothing.
    expect((await configMaps.delete(ctx(), 'fin', undefined, del)).deleted).toBe(false);
    const cleared = structuredClone(terminating);
    cleared.metadata = { ...cleared.metadata, finalizers: [] };
    await configMaps.update(ctx(), { name: 'fin', updatedObject: async () => cleared }, undefined, undefined, write);
    expect((await failure(configMaps.get(ctx(), 'fin', {}))).code).toBe(404);
  });

  it('records the propagation policy as a finalizer', async () => {
    await configMaps.create(ctx(), cm('fg'), undefined, write);
    const r = await configMaps.delete(ctx(), 'fg', undefined, { ...del, propagationPolicy: 'Foreground' });
    expect(r.deleted).toBe(false);
    expect((await configMaps.get(ctx(), 'fg', {})).metadata?.finalizers).toEqual(['foregroundDeletion']);
    await configMaps.create(ctx(), cm('or'), undefined, write);
    await configMaps.delete(ctx(), 'or', undefined, { ...del, propagationPolicy: 'Orphan' });
    expect((await configMaps.get(ctx(), 'or', {})).metadata?.finalizers).toEqual(['orphan']);
  });

  it('answers 409 when a precondition does not hold', async () => {
    await configMaps.create(ctx(), cm('one'), undefined, write);
    const err = await failure(configMaps.delete(ctx(), 'one', undefined, { ...del, preconditions: { uid: 'wrong' } }));
    expect(err.status).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(err.message).toContain('Precondition failed: UID in precondition: wrong');
    expect(await configMaps.get(ctx(), 'one', {})).toBeDefined();
  });

  it('deletes nothing on dry-run', async () => {
    await configMaps.create(ctx(), cm('one'), undefined, write);
    expect((await configMaps.delete(ctx(), 'one', undefined, { dryRun: true })).deleted).toBe(true);
    expect(await configMaps.get(ctx(), 'one', {})).toBeDefined();
  });

  it('deletes a collection by selector', async () => {
    for (const [name, app] of [
      ['a', 'web'],
      ['b', 'web'],
      ['c', 'db'],
    ] as const) {
      await configMaps.create(ctx(), cm(name, { metadata: { name, labels: { app } } }), undefined, write);
    }
    const gone = await configMaps.deleteCollection(ctx(), undefined, del, { labelSelector: 'app=web' });
    expect(gone.items.map((i) => i.metadata?.name).sort()).toEqual(['a', 'b']);
    expect((await configMaps.list(ctx(), {})).items.map((i) => i.metadata?.name)).toEqual(['c']);
  });
});

describe('GenericStore list and watch', () => {
  beforeEach(async () => {
    for (const [ns, name, app] of [
      ['a', 'x', 'web'],
      ['a', 'y', 'db'],
      ['b', 'z', 'web'],
    ] as const) {
      await configMaps.create(ctx(ns), cm(name, { metadata: { name, labels: { app } } }), undefined, write);
    }
  });

  it('lists one namespace or all, with selectors', async () => {
    const names = async (ns: string, o = {}) =>
      (await configMaps.list(ctx(ns), o)).items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`);
    expect(await names('a')).toEqual(['a/x', 'a/y']);
    expect(await names('')).toEqual(['a/x', 'a/y', 'b/z']);
    expect(await names('', { labelSelector: 'app=web' })).toEqual(['a/x', 'b/z']);
    expect(await names('', { fieldSelector: 'metadata.namespace=b' })).toEqual(['b/z']);
    expect(await names('', { fieldSelector: 'metadata.name!=x', labelSelector: 'app in (web)' })).toEqual(['b/z']);
  });

  it('answers 400 for bad selectors', async () => {
    expect((await failure(configMaps.list(ctx(), { labelSelector: 'a in b' }))).code).toBe(400);
    const err = await failure(configMaps.list(ctx(), { fieldSelector: 'spec.nodeName=x' }));
    expect(err.status).toMatchObject({ code: 400, message: 'field label not supported: spec.nodeName' });
  });

  it('pages at one resourceVersion', async () => {
    const first = await configMaps.list(ctx(''), { limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.metadata.continue).toBeTruthy();
    await configMaps.create(ctx('c'), cm('late'), undefined, write);
    const second = await configMaps.list(ctx(''), { limit: 2, continue: first.metadata.continue });
    expect(second.items.map((i) => i.metadata?.name)).toEqual(['z']);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(second.metadata.continue).toBeUndefined();
  });

  it('watches changes after a resourceVersion, in order, with the type of each', async () => {
    const start = (await configMaps.list(ctx(''), {})).metadata.resourceVersion;
    const abort = new AbortController();
    const events: WatchEvent[] = [];
    const done = (async () => {
      for await (const e of configMaps.watch({ ...ctx('a'), signal: abort.signal }, { resourceVersion: start })) {
        events.push(e);
        if (events.length === 3) abort.abort();
      }
    })();
    const x = await configMaps.get(ctx('a'), 'x', {});
    await configMaps.update(
      ctx('a'),
      { name: 'x', updatedObject: async () => ({ ...x, data: { a: 'changed' } }) as ApiObject },
      undefined,
      undefined,
      write,
    );
    await configMaps.create(ctx('b'), cm('elsewhere'), undefined, write);
    await configMaps.create(ctx('a'), cm('new'), undefined, write);
    await configMaps.delete(ctx('a'), 'y', undefined, { dryRun: false });
    await done;
    expect(events.map((e) => `${e.type} ${(e.object as ApiObject).metadata?.name}`)).toEqual([
      'MODIFIED x',
      'ADDED new',
      'DELETED y',
    ]);
    expect(events.every((e) => e.object.kind === 'ConfigMap')).toBe(true);
  });
});
