/**
 * The behaviour every kind shares (model: the common parts of Kubernetes' per-kind strategies), used as is for kinds
 * without special rules and extended by the others:
 *
 * - on create, `status` is cleared for kinds with a status subresource (status is written through it), and
 *   `generation` starts at 1 for kinds that track it;
 * - on an update of the main resource, `status` is kept from the stored object (kinds with a status subresource)
 *   and `generation` is bumped when anything but metadata and status changed;
 * - on an update of the status subresource, everything but `status` is kept from the stored object, metadata
 *   included except its managed fields (`ResetObjectMetaForStatus`).
 */
import { type ApiObject, type FieldError, type Kind } from '@platform/api';

import { type CreateStrategy, type RequestContext, type UpdateStrategy } from '../rest/rest';

type Obj = ApiObject & Record<string, unknown>;

function specOf(obj: Obj): string {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return JSON.stringify(rest);
}

/** Options of the default strategy. */
export interface DefaultStrategyOptions {
  /** PUT may create a missing object. */
  allowCreateOnUpdate?: boolean;
  /** Updates without a resourceVersion are accepted. */
  allowUnconditionalUpdate?: boolean;
  /** Kind-specific validation of a new object (metadata is validated by the store). */
  validate?: (ctx: RequestContext, obj: ApiObject) => FieldError[];
  /** Kind-specific validation of an update. */
  validateUpdate?: (ctx: RequestContext, obj: ApiObject, old: ApiObject) => FieldError[];
  /** Kind-specific normalisation of a new object, after the common one (must not fail). */
  prepareForCreate?: (ctx: RequestContext, obj: ApiObject) => void;
  /** Kind-specific normalisation of an update, after the common one (must not fail). */
  prepareForUpdate?: (ctx: RequestContext, obj: ApiObject, old: ApiObject) => void;
}

/** The default strategy of the main resource of `kind`. */
export function defaultStrategy(kind: Kind, o: DefaultStrategyOptions = {}): CreateStrategy & UpdateStrategy {
  const hasStatus = 'status' in kind.subresources;
  // In Kubernetes 1.21 the kinds with a spec and a status subresource outside the core group track generation
  // (deployments, jobs, ...), and of the core kinds only ReplicationController does.
  const tracksGeneration = hasStatus && (kind.group !== '' || kind.kind === 'ReplicationController');
  return {
    allowCreateOnUpdate: o.allowCreateOnUpdate ?? false,
    allowUnconditionalUpdate: o.allowUnconditionalUpdate ?? true,
    prepareForCreate(_ctx, obj) {
      const x = obj as Obj;
      if (hasStatus) delete x.status;
      if (obj.metadata) {
        if (tracksGeneration) obj.metadata.generation = 1;
        else delete obj.metadata.generation;
      }
      o.prepareForCreate?.(_ctx, obj);
    },
    validate: (ctx, obj) => o.validate?.(ctx, obj) ?? [],
    prepareForUpdate(_ctx, obj, old) {
      const x = obj as Obj;
      const y = old as Obj;
      if (hasStatus) {
        if (y.status === undefined) delete x.status;
        else x.status = y.status;
      }
      if (obj.metadata && tracksGeneration) {
        const generation = old.metadata?.generation ?? 1;
        obj.metadata.generation = specOf(x) === specOf(y) ? generation : generation + 1;
      } else if (obj.metadata) {
        delete obj.metadata.generation;
      }
      o.prepareForUpdate?.(_ctx, obj, old);
    },
    validateUpdate: (ctx, obj, old) => o.validateUpdate?.(ctx, obj, old) ?? [],
  };
}

/** The strategy of the status subresource: only `status` changes. */
export function statusStrategy(
  o: Pick<DefaultStrategyOptions, 'validateUpdate' | 'prepareForUpdate'> = {},
): UpdateStrategy {
  return {
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    prepareForUpdate(_ctx, obj, old) {
      const status = (obj as Obj).status;
      // Managed fields were computed for this write by the handler: they stay (as in ResetObjectMetaForStatus).
      const managedFields = obj.metadata?.managedFields;
      for (const k of Object.keys(obj)) delete (obj as Obj)[k];
      Object.assign(obj, structuredClone(old));
      if (status === undefined) delete (obj as Obj).status;
      else (obj as Obj).status = status;
      if (obj.metadata) {
        if (managedFields === undefined) delete obj.metadata.managedFields;
        else obj.metadata.managedFields = managedFields;
      }
      o.prepareForUpdate?.(_ctx, obj, old);
    },
    validateUpdate: (ctx, obj, old) => o.validateUpdate?.(ctx, obj, old) ?? [],
  };
}
