/** core/v1 LimitRange: per-object resource limits and defaults in a namespace. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { LimitRangeItemSchema } from './types';

const P = schemaPrefix('', 'v1');

/** LimitRangeSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const LimitRangeSpecSchema = object(`${P}LimitRangeSpec`, {
  limits: opt(1, t.array(ref(LimitRangeItemSchema)), 'The limits enforced.'),
});

/** LimitRange, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const LimitRangeSchema = object(
  `${P}LimitRange`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(LimitRangeSpecSchema), 'The limits enforced.'),
  },
  { description: 'LimitRange sets resource usage limits for each kind of resource in a Namespace.' },
);
/** A LimitRange object in its JSON form. */
export type LimitRange = Static<typeof LimitRangeSchema>;

/** The LimitRange kind: discovery facts, defaults, printer columns and field selectors. */
export const LimitRangeKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'LimitRange',
  plural: 'limitranges',
  shortNames: ['limits'],
  scope: 'Namespaced',
  schema: LimitRangeSchema,
  defaults(lr) {
    for (const item of lr.spec?.limits ?? []) {
      if (item.type !== 'Container') continue;
      // Default limit = max; default request = default limit, else min (SetDefaults_LimitRangeItem).
      const def: Record<string, string> = { ...item.default };
      for (const [k, v] of Object.entries(item.max ?? {})) def[k] ??= v;
      const request: Record<string, string> = { ...item.defaultRequest };
      for (const [k, v] of Object.entries(def)) request[k] ??= v;
      for (const [k, v] of Object.entries(item.min ?? {})) request[k] ??= v;
      if (Object.keys(def).length) item.default = def;
      if (Object.keys(request).length) item.defaultRequest = request;
    }
  },
});
