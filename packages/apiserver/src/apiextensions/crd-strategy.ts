/**
 * How CustomResourceDefinitions are stored (model: 1.21's `pkg/registry/customresourcedefinition/strategy.go` and
 * `etcd.go`): status is the controllers' (conditions, accepted names) and the storage version is recorded in
 * `status.storedVersions` on every write; a delete marks the CRD terminating with the
 * `customresourcecleanup.apiextensions.platform` finalizer, which the finalizer controller removes once every
 * custom object is gone.
 */
import {
  type ApiObject,
  type CustomResourceDefinition,
  type CustomResourceDefinitionCondition,
  type CustomResourceDefinitionV1beta1,
  crdV1beta1ToV1,
  type Kind,
} from '@platform/api';

import { type BuiltinResource } from '../registry/builtin';
import { defaultStrategy, statusStrategy } from '../registry/generic/default-strategy';
import { type DeleteStrategy } from '../registry/rest/rest';
import {
  validateCustomResourceDefinition,
  validateCustomResourceDefinitionUpdate,
  validateStoredVersions,
} from './crd-validation';

/** The finalizer that holds a deleted CRD until its custom objects are gone. */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.platform';

type CRD = CustomResourceDefinition;

/** A CRD in its v1 shape (v1beta1 requests reach the strategy in their own version). */
export function asV1(obj: ApiObject): CRD {
  return obj.apiVersion?.endsWith('/v1beta1') ? crdV1beta1ToV1(obj as CustomResourceDefinitionV1beta1) : (obj as CRD);
}

/** Adds the storage version to `status.storedVersions` (kept in the order versions were first stored). */
function recordStorageVersion(crd: CRD): void {
  const storage = crd.spec?.versions?.find((v) => v.storage)?.name;
  crd.status ??= {};
  const stored = (crd.status.storedVersions ??= []);
  if (storage && !stored.includes(storage)) stored.push(storage);
}

/** Sets a condition, keeping its transition time when its status did not change. */
export function setCondition(crd: CRD, c: CustomResourceDefinitionCondition, now: string): void {
  crd.status ??= {};
  const conditions = (crd.status.conditions ??= []);
  const i = conditions.findIndex((x) => x.type === c.type);
  const old = conditions[i];
  const next = { ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now };
  if (i < 0) conditions.push(next);
  else conditions[i] = next;
}

/** The condition of a type, if set. */
export function conditionOf(crd: CRD, type: string): CustomResourceDefinitionCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

const DELETE: DeleteStrategy = {
  pendingFinalization: (obj) => !obj.metadata?.deletionTimestamp,
  prepareForDelete(obj: ApiObject) {
    const crd = obj as CRD;
    const m = (crd.metadata ??= {});
    const finalizers = (m.finalizers ??= []);
    if (!finalizers.includes(CLEANUP_FINALIZER)) finalizers.push(CLEANUP_FINALIZER);
    setCondition(
      crd,
      {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      },
      m.deletionTimestamp ?? new Date().toISOString().slice(0, 19) + 'Z',
    );
  },
};

/** The table entry of customresourcedefinitions (both versions: v1beta1 objects are converted before this). */
export function customResourceDefinitionResource(kind: Kind): BuiltinResource {
  return {
    strategy: defaultStrategy(kind, {
      prepareForCreate: (_ctx, obj) => {
        const crd = obj as CRD;
        crd.status = { storedVersions: [] };
        recordStorageVersion(crd);
      },
      prepareForUpdate: (_ctx, obj) => recordStorageVersion(obj as CRD),
      validate: (_ctx, obj) => validateCustomResourceDefinition(asV1(obj)),
      validateUpdate: (_ctx, obj, old) => validateCustomResourceDefinitionUpdate(asV1(obj), asV1(old)),
    }),
    status: statusStrategy({ validateUpdate: (_ctx, obj) => validateStoredVersions(asV1(obj)) }),
    deleteStrategy: DELETE,
  };
}
