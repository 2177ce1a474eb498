/**
 * The Secret strategy (model: Kubernetes 1.21 `pkg/registry/core/secret/strategy.go`, `ValidateSecret`):
 * `stringData` is merged into `data` on every write; keys are valid config map keys; the total size is at most
 * 1 MiB; the type-specific keys are present; `type` is immutable, and so is the data of an `immutable: true`
 * secret.
 */
import { type FieldError, FieldPath, field, isConfigMapKey, type Kind, type Secret } from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { base64Size, MAX_DATA_SIZE, validateImmutableData } from '../configmap/strategy';

/** The annotation naming the service account of a service account token secret. */
export const SERVICE_ACCOUNT_NAME_KEY = 'kubernetes.io/service-account.name';

const REQUIRED_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
};

function mergeStringData(s: Secret): void {
  if (!s.stringData) return;
  const data = { ...s.data };
  for (const [k, v] of Object.entries(s.stringData)) data[k] = Buffer.from(v ?? '', 'utf8').toString('base64');
  s.data = data;
  delete s.stringData;
}

/** Validation of a Secret (after `stringData` is merged into `data`). */
export function validateSecret(s: Secret): FieldError[] {
  const errs: FieldError[] = [];
  const dataPath = new FieldPath('data');
  let total = 0;
  for (const [k, v] of Object.entries(s.data ?? {})) {
    errs.push(...field.invalidEach(dataPath.key(k), k, isConfigMapKey(k)));
    total += base64Size(v ?? '');
  }
  if (total > MAX_DATA_SIZE) errs.push(field.tooLong(dataPath, '', MAX_DATA_SIZE));
  const type = s.type ?? 'Opaque';
  const data = s.data ?? {};
  if (type === 'kubernetes.io/service-account-token') {
    if (!s.metadata?.annotations?.[SERVICE_ACCOUNT_NAME_KEY]) {
      errs.push(field.required(new FieldPath('metadata', 'annotations').key(SERVICE_ACCOUNT_NAME_KEY), ''));
    }
  } else if (type === 'kubernetes.io/basic-auth') {
    if (!('username' in data) && !('password' in data)) {
      errs.push(field.required(dataPath.key('username'), ''), field.required(dataPath.key('password'), ''));
    }
  }
  for (const key of REQUIRED_KEYS[type] ?? []) {
    if (!(key in data)) errs.push(field.required(dataPath.key(key), ''));
  }
  if (type === 'kubernetes.io/dockerconfigjson' && data['.dockerconfigjson'] !== undefined) {
    try {
      JSON.parse(Buffer.from(data['.dockerconfigjson'], 'base64').toString('utf8'));
    } catch (err) {
      errs.push(field.invalid(dataPath.key('.dockerconfigjson'), '<secret contents redacted>', (err as Error).message));
    }
  }
  return errs;
}

/** The strategy of `secrets`. */
export function secretStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    prepareForCreate: (_ctx, obj) => mergeStringData(obj as Secret),
    prepareForUpdate: (_ctx, obj) => mergeStringData(obj as Secret),
    validate: (_ctx, obj) => validateSecret(obj as Secret),
    validateUpdate: (_ctx, obj, old) => {
      const s = obj as Secret;
      const o = old as Secret;
      const errs = validateSecret(s);
      if ((s.type ?? 'Opaque') !== (o.type ?? 'Opaque')) {
        errs.push(field.invalid(new FieldPath('type'), s.type ?? '', 'field is immutable'));
      }
      errs.push(...validateImmutableData(s, o, [['data', s.data, o.data]]));
      return errs;
    },
  });
}
