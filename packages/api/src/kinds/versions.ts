/**
 * Kinds that Kubernetes 1.21 also serves in an older version with the same fields (rbac, scheduling, coordination,
 * storage, node ... `v1beta1`): one definition, copied into the other version with its schema renamed, so the
 * defaults, columns and field selectors are those of the main version unless the copy overrides them.
 */
import { type TObject } from '@sinclair/typebox';

import { schemaInVersion } from '../schema/retarget';
import { defineKind, type Kind, type KindSpec, schemaPrefix } from '../scheme/kind';

/** `kind` served as `version` of its group (or of `group`), with the same schema under that version's names. */
export function kindInVersion<S extends TObject>(
  kind: Kind<S>,
  version: string,
  overrides: Partial<Omit<KindSpec<S>, 'schema' | 'version'>> = {},
): Kind<S> {
  const group = overrides.group ?? kind.group;
  const schema = schemaInVersion(kind.schema, schemaPrefix(kind.group, kind.version), schemaPrefix(group, version));
  return defineKind({ ...kind.spec, ...overrides, group, version, schema });
}
