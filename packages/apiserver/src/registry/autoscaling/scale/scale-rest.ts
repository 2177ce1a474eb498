/**
 * The `scale` subresource of the replicated kinds (model: Kubernetes 1.21 `ScaleREST` of
 * `pkg/registry/apps/deployment/storage/storage.go` and its siblings): reads and writes an autoscaling/v1 Scale
 * made from the parent object. GET answers the parent's `spec.replicas`, `status.replicas` and its selector as a
 * string; PUT and PATCH change only the parent's `spec.replicas`, with the Scale's resourceVersion (when given) as
 * the precondition (409 when stale).
 */
import {
  type ApiObject,
  badRequest,
  FieldPath,
  field,
  formatLabelSelector,
  type FieldError,
  invalid,
  type Kind,
  type LabelSelector,
  type Scale,
  selectorFromSet,
} from '@platform/api';

import { parentManagedFields, scaleManagedFields } from '../../../patch/apply/scale-managed-fields';
import { type GenericStore } from '../../generic/store';
import {
  type Getter,
  type RequestContext,
  type RestStorage,
  type UpdatedObjectInfo,
  type Updater,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../../rest/rest';

type Replicated = ApiObject & {
  spec?: { replicas?: number | null; selector?: LabelSelector | Record<string, string> | null };
  status?: { replicas?: number | null };
};

/** Validation of a Scale (model: `ValidateScale`). */
export function validateScale(scale: Scale): FieldError[] {
  const replicas = scale.spec?.replicas ?? 0;
  return replicas < 0
    ? [field.invalid(new FieldPath('spec', 'replicas'), replicas, 'must be greater than or equal to 0')]
    : [];
}

/** The selector of a replicated object as Scale's `status.selector` prints it. */
export function scaleSelector(kind: Kind, obj: Replicated): string {
  const sel = obj.spec?.selector;
  if (!sel) return '';
  // ReplicationController's selector is a plain label map; the apps kinds carry a LabelSelector.
  if (kind.kind === 'ReplicationController') return selectorFromSet(sel as Record<string, string>).toString();
  return formatLabelSelector(sel as LabelSelector);
}

/** The Scale of a replicated object. */
export function scaleOf(kind: Kind, obj: Replicated): Scale {
  const m = obj.metadata ?? {};
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: obj.spec?.replicas ?? 0 },
    status: { replicas: obj.status?.replicas ?? 0, selector: scaleSelector(kind, obj) },
  };
}

/** The storage of `<resource>/scale`. */
export class ScaleREST implements Getter, Updater, RestStorage {
  /**
   * @param kind the Scale kind (the body of the subresource)
   * @param parentKind the kind whose replicas are scaled
   * @param parent the parent's main store: the write goes through its strategy, so generation is bumped
   */
  constructor(
    readonly kind: Kind,
    private readonly parentKind: Kind,
    private readonly parent: GenericStore,
  ) {}

  async get(ctx: RequestContext, name: string, o: { resourceVersion?: string }): Promise<ApiObject> {
    return scaleOf(this.parentKind, (await this.parent.get(ctx, name, o)) as Replicated);
  }

  async update(
    ctx: RequestContext,
    info: UpdatedObjectInfo,
    _validateCreate: ValidateObjectFunc | undefined,
    validateUpdate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<{ object: ApiObject; created: boolean }> {
    const result = await this.parent.update(
      ctx,
      {
        name: info.name,
        updatedObject: async (c, current) => {
          if (!current) throw badRequest(`${this.parentKind.kind} ${JSON.stringify(info.name)} not found`);
          const parent = current as Replicated;
          const old = scaleOf(this.parentKind, parent);
          // The handler tracks the Scale's managed fields; replicas ownership moves between it and the parent.
          const oldManaged = scaleManagedFields(parent.metadata?.managedFields);
          const scale = (await info.updatedObject(
            c,
            structuredClone({ ...old, metadata: { ...old.metadata, managedFields: oldManaged } }),
          )) as Scale;
          if (scale.metadata?.name && scale.metadata.name !== info.name) {
            throw badRequest(
              `the name of the object (${scale.metadata.name}) does not match the name on the URL (${info.name})`,
            );
          }
          const errs = validateScale(scale);
          if (errs.length) throw invalid({ group: 'autoscaling', kind: 'Scale' }, info.name, errs);
          if (validateUpdate) await validateUpdate(scale, old);
          const next = structuredClone(parent);
          (next.spec ??= {}).replicas = scale.spec?.replicas ?? 0;
          const managed = parentManagedFields(
            parent.metadata?.managedFields,
            scale.metadata?.managedFields,
            this.parentKind.apiVersion,
          );
          if (managed) (next.metadata ??= {}).managedFields = managed;
          else if (next.metadata) delete next.metadata.managedFields;
          // The Scale's resourceVersion is the parent's: a stale one makes the parent's update a 409.
          const rv = scale.metadata?.resourceVersion;
          if (rv) (next.metadata ??= {}).resourceVersion = rv;
          else if (next.metadata) delete next.metadata.resourceVersion;
          return next;
        },
      },
      undefined,
      undefined,
      o,
    );
    return { object: scaleOf(this.parentKind, result.object as Replicated), created: false };
  }
}
