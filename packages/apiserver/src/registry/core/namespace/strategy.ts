/**
 * The Namespace strategies (model: Kubernetes 1.21 `pkg/registry/core/namespace/strategy.go` and `storage.go`):
 *
 * - create: `status.phase` is `Active`, and `spec.finalizers` always holds `platform` (the namespace controller
 *   removes it once the namespace's content is gone);
 * - update: `spec` and `status` are kept (spec.finalizers change only through `namespaces/finalize`, status only
 *   through `namespaces/status`);
 * - `namespaces/status`: the phase is `Active` while there is no `deletionTimestamp` and `Terminating` after;
 * - `namespaces/finalize`: only `spec.finalizers` changes;
 * - delete: a namespace with `spec.finalizers` is not removed but marked (`deletionTimestamp`, phase
 *   `Terminating`); it goes when its last finalizer, of spec or metadata, is removed.
 */
import {
  type ApiObject,
  type FieldError,
  FieldPath,
  field,
  isQualifiedName,
  type Kind,
  type Namespace,
} from '@platform/api';

import { defaultStrategy, statusStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type DeleteStrategy, type UpdateStrategy } from '../../rest/rest';

/** The finalizer the namespace controller owns (Kubernetes' `kubernetes`). */
export const FINALIZER_PLATFORM = 'platform';

/**
 * One `spec.finalizers` entry (model: `validateFinalizerName`): a qualified name, and a name without a domain
 * must be a standard one (`platform`).
 */
export function validateNamespaceFinalizerName(name: string, path: FieldPath): FieldError[] {
  const errs = field.invalidEach(path, name, isQualifiedName(name));
  if (errs.length === 0 && !name.includes('/') && name !== FINALIZER_PLATFORM) {
    errs.push(field.invalid(path, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return errs;
}

function validateSpecFinalizers(ns: Namespace): FieldError[] {
  const path = new FieldPath('spec', 'finalizers');
  return (ns.spec?.finalizers ?? []).flatMap((f, i) => validateNamespaceFinalizerName(f, path.index(i)));
}

/** The strategy of `namespaces`. */
export function namespaceStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    prepareForCreate: (_ctx, obj) => {
      const ns = obj as Namespace;
      ns.status = { phase: 'Active' };
      const finalizers = ns.spec?.finalizers ?? [];
      if (!finalizers.includes(FINALIZER_PLATFORM)) finalizers.push(FINALIZER_PLATFORM);
      ns.spec = { ...ns.spec, finalizers };
    },
    validate: (_ctx, obj) => validateSpecFinalizers(obj as Namespace),
    prepareForUpdate: (_ctx, obj, old) => {
      const ns = obj as Namespace;
      const o = old as Namespace;
      if (o.spec === undefined) delete ns.spec;
      else ns.spec = structuredClone(o.spec);
    },
  });
}

/** The strategy of `namespaces/status`. */
export function namespaceStatusStrategy(): UpdateStrategy {
  return statusStrategy({
    validateUpdate: (_ctx, obj) => {
      const ns = obj as Namespace;
      const phase = ns.status?.phase ?? '';
      const path = new FieldPath('status', 'Phase');
      if (!ns.metadata?.deletionTimestamp) {
        if (phase !== 'Active')
          return [field.invalid(path, phase, "may only be 'Active' if `deletionTimestamp` is empty")];
      } else if (phase !== 'Terminating') {
        return [field.invalid(path, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
      }
      return [];
    },
  });
}

/** The strategy of `namespaces/finalize`: everything but `spec.finalizers` is kept from the stored namespace. */
export function namespaceFinalizeStrategy(): UpdateStrategy {
  return {
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    prepareForUpdate(_ctx, obj, old) {
      const finalizers = (obj as Namespace).spec?.finalizers;
      for (const k of Object.keys(obj)) delete (obj as Record<string, unknown>)[k];
      Object.assign(obj, structuredClone(old));
      const ns = obj as Namespace;
      if (finalizers === undefined) {
        if (ns.spec) delete ns.spec.finalizers;
      } else ns.spec = { ...ns.spec, finalizers };
    },
    validateUpdate: (_ctx, obj) => validateSpecFinalizers(obj as Namespace),
  };
}

/** Namespaces wait for their `spec.finalizers` as well as their metadata finalizers. */
export const NAMESPACE_DELETE_STRATEGY: DeleteStrategy = {
  pendingFinalization(obj: ApiObject) {
    return ((obj as Namespace).spec?.finalizers ?? []).length > 0;
  },
  prepareForDelete(obj: ApiObject) {
    const ns = obj as Namespace;
    ns.status = { ...ns.status, phase: 'Terminating' };
  },
};
