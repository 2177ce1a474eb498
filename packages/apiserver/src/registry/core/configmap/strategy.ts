/**
 * The ConfigMap strategy (model: Kubernetes 1.21 `pkg/registry/core/configmap/strategy.go`, `ValidateConfigMap`):
 * keys of `data` and `binaryData` are valid config map keys and never in both, the total size is at most 1 MiB,
 * and an `immutable: true` config map keeps its data and stays immutable.
 */
import { type ConfigMap, type FieldError, FieldPath, field, isConfigMapKey, type Kind } from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';

/** The largest total size of a ConfigMap's or Secret's data (Kubernetes' `MaxSecretSize`, 1 MiB). */
export const MAX_DATA_SIZE = 1024 * 1024;

/** Bytes of a base64 text once decoded. */
export function base64Size(s: string): number {
  const clean = s.replace(/=+$/, '');
  return Math.floor((clean.length * 3) / 4);
}

/** Validation of a ConfigMap. */
export function validateConfigMap(cm: ConfigMap): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(cm.data ?? {})) {
    errs.push(...field.invalidEach(new FieldPath('data').key(k), k, isConfigMapKey(k)));
    total += k.length + Buffer.byteLength(v ?? '');
  }
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) {
    errs.push(...field.invalidEach(new FieldPath('binaryData').key(k), k, isConfigMapKey(k)));
    if (cm.data && k in cm.data) {
      errs.push(field.invalid(new FieldPath('binaryData').key(k), k, 'duplicate of key present in data'));
    }
    total += k.length + base64Size(v ?? '');
  }
  if (total > MAX_DATA_SIZE) errs.push(field.tooLong(new FieldPath(''), '', MAX_DATA_SIZE));
  return errs;
}

/** Forbids changes of `data`/`binaryData` of an immutable object, and turning `immutable` off (model: `ValidateConfigMapUpdate`). */
export function validateImmutableData(
  obj: { immutable?: boolean | null },
  old: { immutable?: boolean | null },
  data: [string, unknown, unknown][],
): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) {
    errs.push(field.forbidden(new FieldPath('immutable'), 'field is immutable when `immutable` is set'));
  }
  for (const [name, now, before] of data) {
    if (JSON.stringify(now ?? {}) !== JSON.stringify(before ?? {})) {
      errs.push(field.forbidden(new FieldPath(name), 'field is immutable when `immutable` is set'));
    }
  }
  return errs;
}

/** The strategy of `configmaps`. */
export function configMapStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateConfigMap(obj as ConfigMap),
    validateUpdate: (_ctx, obj, old) => {
      const cm = obj as ConfigMap;
      const o = old as ConfigMap;
      return [
        ...validateImmutableData(cm, o, [
          ['data', cm.data, o.data],
          ['binaryData', cm.binaryData, o.binaryData],
        ]),
        ...validateConfigMap(cm),
      ];
    },
  });
}
