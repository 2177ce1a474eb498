import { type ApiObject, type FieldError, type Namespace, NamespaceKind } from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import {
  NAMESPACE_DELETE_STRATEGY,
  namespaceFinalizeStrategy,
  namespaceStatusStrategy,
  namespaceStrategy,
} from './strategy';

const ctx: RequestContext = { namespace: '', now: () => 0 };
const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

describe('namespace strategy', () => {
  it('sets the phase and the platform finalizer on create, keeping other finalizers', () => {
    const ns: Namespace = {
      metadata: { name: 'a' },
      spec: { finalizers: ['example.com/x'] },
      status: { phase: 'Terminating' },
    };
    namespaceStrategy(NamespaceKind).prepareForCreate(ctx, ns as ApiObject);
    expect(ns.status).toEqual({ phase: 'Active' });
    expect(ns.spec?.finalizers).toEqual(['example.com/x', 'platform']);
  });

  it.each<[string, string[], string[]]>([
    ['standard and qualified finalizers', ['platform', 'example.com/x'], []],
    ['an unqualified finalizer', ['other'], ['FieldValueInvalid spec.finalizers[0]']],
    ['an invalid name', ['a b/c'], ['FieldValueInvalid spec.finalizers[0]']],
  ])('validates %s', (_name, finalizers, expected) => {
    const ns: Namespace = { metadata: { name: 'a' }, spec: { finalizers } };
    expect(show(namespaceStrategy(NamespaceKind).validate(ctx, ns as ApiObject))).toEqual(expected);
  });

  it('keeps spec and status on update', () => {
    const old: Namespace = { metadata: { name: 'a' }, spec: { finalizers: ['platform'] }, status: { phase: 'Active' } };
    const next: Namespace = {
      metadata: { name: 'a', labels: { x: 'y' } },
      spec: { finalizers: [] },
      status: { phase: 'Terminating' },
    };
    namespaceStrategy(NamespaceKind).prepareForUpdate(ctx, next as ApiObject, old as ApiObject);
    expect([next.spec, next.status, next.metadata?.labels]).toEqual([
      { finalizers: ['platform'] },
      { phase: 'Active' },
      { x: 'y' },
    ]);
  });
});

describe('namespace status strategy', () => {
  it.each<[string, string | undefined, string, string[]]>([
    ['Active without deletion', undefined, 'Active', []],
    ['Terminating without deletion', undefined, 'Terminating', ['FieldValueInvalid status.Phase']],
    ['Terminating with deletion', '2020-01-01T00:00:00Z', 'Terminating', []],
    ['Active with deletion', '2020-01-01T00:00:00Z', 'Active', ['FieldValueInvalid status.Phase']],
  ])('%s', (_name, deletionTimestamp, phase, expected) => {
    const ns = { metadata: { name: 'a', deletionTimestamp }, status: { phase } } as Namespace;
    expect(show(namespaceStatusStrategy().validateUpdate(ctx, ns as ApiObject, ns as ApiObject))).toEqual(expected);
  });
});

describe('namespace finalize strategy', () => {
  it('changes spec.finalizers only', () => {
    const old: Namespace = {
      metadata: { name: 'a', labels: { a: 'b' } },
      spec: { finalizers: ['platform'] },
      status: { phase: 'Terminating' },
    };
    const next: Namespace = { metadata: { name: 'a' }, spec: { finalizers: [] }, status: { phase: 'Active' } };
    namespaceFinalizeStrategy().prepareForUpdate(ctx, next as ApiObject, old as ApiObject);
    expect(next).toEqual({
      metadata: { name: 'a', labels: { a: 'b' } },
      spec: { finalizers: [] },
      status: { phase: 'Terminating' },
    });
  });
});

describe('namespace deletion', () => {
  it('waits for spec finalizers and marks the namespace Terminating', () => {
    const ns: Namespace = { metadata: { name: 'a' }, spec: { finalizers: ['platform'] }, status: { phase: 'Active' } };
    expect(NAMESPACE_DELETE_STRATEGY.pendingFinalization?.(ns as ApiObject)).toBe(true);
    expect(
      NAMESPACE_DELETE_STRATEGY.pendingFinalization?.({ metadata: {}, spec: { finalizers: [] } } as ApiObject),
    ).toBe(false);
    NAMESPACE_DELETE_STRATEGY.prepareForDelete?.(ns as ApiObject);
    expect(ns.status?.phase).toBe('Terminating');
  });
});
